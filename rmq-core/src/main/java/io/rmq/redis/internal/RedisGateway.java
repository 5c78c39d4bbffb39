package io.rmq.redis.internal;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.BooleanOutput;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.NestedMultiOutput;
import io.lettuce.core.output.ObjectOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.resource.Delay;
import io.rmq.core.RmqException;
import io.rmq.core.RmqUnavailableException;
import org.jspecify.annotations.Nullable;

/**
 * Not API (RMQ's internal Redis layer, changed without notice). Used by every thread that calls Redis (senders',
 * listener containers', admin and start-up threads) and Lettuce's event-loop threads (completions run there); its
 * state is the connection and its commands (volatile, written once: when it connects, {@link #open()} under this
 * object's lock), the transactions' connection and its writing thread "rmq-transactions" (standalone, opened on first
 * use under their own lock; only that thread writes on it) and whether it was closed, so it is thread-safe.
 * <p>
 * One multiplexed Lettuce connection (standalone, Sentinel-discovered master, or Cluster) with binary keys and
 * values, and the calls on it: opening it (also after a start while Redis was down), dispatching commands, loading
 * and calling RMQ's scripts (EVALSHA, falling back to EVAL where a server lost its script cache), and saying what a
 * failed call means (Redis unreachable, a connection down, a timeout whose outcome is unknown). Lettuce's async API
 * pipelines by itself: commands issued without waiting share round trips. Invariant: until connected, every command
 * fails at once with {@link RmqUnavailableException}; no caller waits for a connection. The nodes behind the
 * connection (routing by key, following a failover, per-node checks) are {@link RedisNodes}'.
 */
public final class RedisGateway implements AutoCloseable {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RedisGateway.class);

    private static final long SYNC_TIMEOUT_SECONDS = 60;

    /**
     * Longest an asynchronous call that others queue behind (a batch of sends or acks to one slot) may go without a
     * reply before it fails: long enough for a failover or a reconnect, short enough that a lost reply does not hold
     * a slot's later calls back for long.
     */
    public static final long CALL_TIMEOUT_MILLIS = 5_000;

    /** Null until connected (only a gateway made by {@link #unconnected} starts without a connection). */
    private volatile StatefulConnection<byte[], byte[]> connection;
    /** The connection's commands; until connected, commands that fail at once with {@link RmqUnavailableException}. */
    private volatile RedisClusterAsyncCommands<byte[], byte[]> commands;
    private final AbstractRedisClient client;
    private final boolean cluster;
    /** When this gateway was made without a connection, and why its last attempt to connect failed. */
    private final Instant unreachableSince = Instant.now();
    private volatile String lastFailure = "the first attempt is under way";
    private volatile boolean closed;
    /** Guards the opening and closing of {@link #transactionConnection} and {@link #transactionWriter}. */
    private final Object transactionLock = new Object();
    /** Standalone only, opened on first use ({@link #openTransactions}); null until then. */
    private volatile @Nullable StatefulRedisConnection<byte[], byte[]> transactionConnection;
    /** The one thread that writes on {@link #transactionConnection}; null until it is opened. */
    private volatile @Nullable ExecutorService transactionWriter;

    private RedisGateway(AbstractRedisClient client) {
        if (!(client instanceof RedisClient) && !(client instanceof RedisClusterClient)) {
            throw new IllegalArgumentException("Unsupported Lettuce client " + client.getClass().getName());
        }
        this.client = client;
        this.cluster = client instanceof RedisClusterClient;
        this.commands = unavailableCommands();
    }

    /** Opens a connection on a {@link RedisClient} or {@link RedisClusterClient}; the caller keeps owning the client. */
    public static RedisGateway connect(AbstractRedisClient client) {
        RedisGateway gateway = new RedisGateway(client);
        gateway.install(gateway.openConnection());
        return gateway;
    }

    /**
     * A gateway without a connection yet: every command fails at once with {@link RmqUnavailableException} until
     * {@link #open()} succeeds. For an engine that starts while Redis is down.
     */
    public static RedisGateway unconnected(AbstractRedisClient client) {
        return new RedisGateway(client);
    }

    /**
     * Connects an {@link #unconnected} gateway and loads the scripts on the new connection before commands use it,
     * so that callers never see a half-ready connection. Throws what the attempt failed with (and keeps it for the
     * message of {@link RmqUnavailableException}).
     */
    public synchronized void open() {
        if (connection != null || closed) {
            return;
        }
        StatefulConnection<byte[], byte[]> opened = null;
        try {
            opened = openConnection();
            loadScripts(asyncCommands(opened));
            install(opened);
            if (closed) {
                // close() ran meanwhile (it does not wait for an attempt, which can last a connect timeout)
                opened.closeAsync();
            }
        }
        catch (RuntimeException ex) {
            lastFailure = describe(ex);
            if (opened != null) {
                opened.closeAsync();
            }
            throw ex;
        }
    }

    private StatefulConnection<byte[], byte[]> openConnection() {
        if (client instanceof RedisClusterClient clusterClient) {
            warnIfFailoverIsNotFollowed(clusterClient);
            return clusterClient.connect(ByteArrayCodec.INSTANCE);
        }
        return ((RedisClient) client).connect(ByteArrayCodec.INSTANCE);
    }

    @SuppressWarnings("unchecked")
    private static RedisClusterAsyncCommands<byte[], byte[]> asyncCommands(StatefulConnection<byte[], byte[]> opened) {
        if (opened instanceof StatefulRedisClusterConnection<?, ?> clusterConnection) {
            return ((StatefulRedisClusterConnection<byte[], byte[]>) clusterConnection).async();
        }
        return ((StatefulRedisConnection<byte[], byte[]>) opened).async();
    }

    private void install(StatefulConnection<byte[], byte[]> opened) {
        commands = asyncCommands(opened);
        connection = opened;
    }

    /** Whether a connection has been opened (Lettuce reconnects it by itself after that). */
    public boolean isConnected() {
        return connection != null;
    }

    /** The connection, or null until connected. */
    @Nullable StatefulConnection<byte[], byte[]> connection() {
        return connection;
    }

    boolean isClosed() {
        return closed;
    }

    /** Why the last attempt to connect failed (or that the first is under way). */
    String lastFailure() {
        return lastFailure;
    }

    /** The cluster master that serves {@code key} in the client's current view; null standalone or unknown. */
    @Nullable RedisClusterNode masterServing(byte[] key) {
        if (!(client instanceof RedisClusterClient clusterClient) || connection() == null) {
            return null;
        }
        return clusterClient.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
    }

    private static final java.util.Set<RedisClusterClient> WARNED = java.util.Collections.newSetFromMap(
            new java.util.WeakHashMap<>());

    /**
     * After a master fails over, a cluster client only learns where its slots went by refreshing its topology; a client
     * with neither a periodic nor an adaptive refresh leaves the dead master's slots unreachable until the
     * application restarts. RMQ's own client ({@link io.rmq.redis.RmqRedisClient}) refreshes;
     * a client the caller hands in is the caller's, and stays as configured: RMQ only says so, once per client.
     */
    static void warnIfFailoverIsNotFollowed(RedisClusterClient client) {
        if (client instanceof FollowsFailover) {
            return;
        }
        ClusterTopologyRefreshOptions refresh = client.getOptions() instanceof ClusterClientOptions cluster
                ? cluster.getTopologyRefreshOptions() : ClusterTopologyRefreshOptions.create();
        if (refresh.isPeriodicRefreshEnabled() || !refresh.getAdaptiveRefreshTriggers().isEmpty()) {
            return;
        }
        synchronized (WARNED) {
            if (!WARNED.add(client)) {
                return;
            }
        }
        log.warn("RMQ uses a Redis Cluster client without topology refresh (neither periodic nor adaptive): after a"
                + " failover, RMQ's calls for the lost master's slots fail until the client learns the new topology."
                + " Use RMQ's own client (RmqRedisClient; in Spring Boot rmq.redis.connection=own, the default), or"
                + " enable a refresh (spring.data.redis.lettuce.cluster.refresh.period / .adaptive)");
    }

    /**
     * The failure itself, not the {@code CompletionException} a future's stage wraps it in (null stays null): what
     * the engine reports to its instrumentation.
     */
    public static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null
                ? error.getCause() : error;
    }

    /** "message; cause" of a failed attempt, without the stack: what an operator needs to see. */
    public static String describe(Throwable ex) {
        Throwable root = ex;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == ex || String.valueOf(ex.getMessage()).contains(String.valueOf(root.getMessage()))
                ? String.valueOf(ex.getMessage()) : ex.getMessage() + ": " + root.getMessage();
    }

    private RmqUnavailableException unavailable(String what) {
        return new RmqUnavailableException("Redis is not reachable (since " + LocalTime.ofInstant(unreachableSince,
                ZoneId.systemDefault()).truncatedTo(ChronoUnit.SECONDS) + "; last attempt: " + lastFailure + ")", what);
    }

    /**
     * Stands in for the connection's commands until there is one: every command fails at once (an
     * {@code unavailable} exception), so that no caller waits for a connection that may take minutes to come.
     */
    @SuppressWarnings("unchecked")
    private RedisClusterAsyncCommands<byte[], byte[]> unavailableCommands() {
        return (RedisClusterAsyncCommands<byte[], byte[]>) Proxy.newProxyInstance(
                RedisClusterAsyncCommands.class.getClassLoader(), new Class<?>[] {RedisClusterAsyncCommands.class},
                (proxy, method, args) -> {
                    Class<?> returns = method.getReturnType();
                    if (method.getDeclaringClass() == Object.class) {
                        return switch (method.getName()) {
                            case "equals" -> proxy == args[0];
                            case "hashCode" -> System.identityHashCode(proxy);
                            default -> "unconnected RMQ commands";
                        };
                    }
                    if (returns.isAssignableFrom(AsyncCommand.class)) {
                        AsyncCommand<byte[], byte[], String> failed = new AsyncCommand<>(
                                new Command<>(CommandType.PING, new StatusOutput<>(ByteArrayCodec.INSTANCE)));
                        failed.completeExceptionally(unavailable("a Redis command (" + method.getName() + ")"));
                        return failed;
                    }
                    if (returns == void.class) {
                        return null;
                    }
                    if (returns == boolean.class) {
                        return false;
                    }
                    throw unavailable("a Redis call (" + method.getName() + ")");
                });
    }

    /**
     * Writes the commands to the connection in one go, in order: one write and flush for all of them on a standalone
     * connection, where the async commands flush each command on its own (a batch send's dozens of commands cost as
     * many system calls, and Redis as many reads). A cluster connection routes each by its key, as for any command.
     * Without a connection every command fails at once, as the async commands do.
     */
    void dispatchAll(List<? extends AsyncCommand<byte[], byte[], ?>> batch) {
        StatefulConnection<byte[], byte[]> current = connection;
        if (current == null) {
            for (AsyncCommand<byte[], byte[], ?> command : batch) {
                command.completeExceptionally(unavailable("a Redis command (" + command.getType() + ")"));
            }
            return;
        }
        current.dispatch(batch);
    }

    /**
     * Whether {@link #dispatchTransaction} can be used: a connection to one server (standalone, or Sentinel's master).
     * A cluster connection routes each command by its key, and MULTI has none.
     */
    boolean transactions() {
        return !cluster;
    }

    /**
     * Opens the connection that {@link #dispatchTransaction} writes on, and the thread that writes there (once;
     * blocking, up to the connect timeout). A connection of its own: on the shared connection every thread's commands
     * are written as they come, so another thread's pop could land between a MULTI and its EXEC and be queued in it.
     */
    void openTransactions() {
        synchronized (transactionLock) {
            if (transactionConnection == null && !closed && !cluster) {
                transactionConnection = ((RedisClient) client).connect(ByteArrayCodec.INSTANCE);
                transactionWriter = Executors.newSingleThreadExecutor(runnable -> {
                    Thread thread = new Thread(runnable, "rmq-transactions");
                    thread.setDaemon(true);
                    return thread;
                });
            }
        }
    }

    /**
     * Writes the commands (a {@link Transaction}'s, and what must follow its EXEC) on the transactions' connection
     * ({@link #openTransactions}), from its one writing thread: Lettuce hands each command of a write to the
     * connection's event loop on its own, and runs a write made on that event loop at once, so writes from several
     * threads (a completion on the event loop among them) could interleave; from one thread they go out in order,
     * each transaction's commands back to back. Written past the connection's own transaction tracking (Lettuce wraps
     * what follows a MULTI it saw dispatched; {@link Transaction} reads EXEC's reply itself).
     */
    void dispatchTransaction(List<? extends AsyncCommand<byte[], byte[], ?>> batch) {
        StatefulRedisConnection<byte[], byte[]> current = transactionConnection;
        ExecutorService writer = transactionWriter;
        if (current == null || writer == null || closed) {
            failAll(batch);
            return;
        }
        try {
            writer.execute(() -> ((RedisChannelHandler<byte[], byte[]>) current).getChannelWriter().write(batch));
        }
        catch (RejectedExecutionException ex) {
            failAll(batch); // closed meanwhile
        }
    }

    private void failAll(List<? extends AsyncCommand<byte[], byte[], ?>> batch) {
        for (AsyncCommand<byte[], byte[], ?> command : batch) {
            command.completeExceptionally(unavailable("a Redis command (" + command.getType() + ")"));
        }
    }

    /** One command, written and flushed at once (one hand-off to the connection's thread). */
    void dispatch(AsyncCommand<byte[], byte[], ?> command) {
        StatefulConnection<byte[], byte[]> current = connection;
        if (current == null) {
            command.completeExceptionally(unavailable("a Redis command (" + command.getType() + ")"));
            return;
        }
        current.dispatch(command);
    }

    /** The async commands; for standalone and cluster alike (cluster routes each command by its key's slot). */
    RedisClusterAsyncCommands<byte[], byte[]> commands() {
        return commands;
    }


    public boolean isCluster() {
        return cluster;
    }

    /** The Lettuce client this gateway's connection comes from (RMQ's own, or the caller's). */
    public AbstractRedisClient client() {
        return client;
    }

    /** Loads every script into the script cache (all masters of a cluster) so EVALSHA finds them. */
    public void loadScripts() {
        loadScripts(commands);
    }

    private static void loadScripts(RedisClusterAsyncCommands<byte[], byte[]> commands) {
        CompletableFuture<?>[] loads = new CompletableFuture<?>[RmqScript.values().length];
        for (RmqScript script : RmqScript.values()) {
            loads[script.ordinal()] = commands.scriptLoad(script.source()).toCompletableFuture();
        }
        await(CompletableFuture.allOf(loads), "loading Lua scripts");
    }

    /**
     * A reconnect delay for the Lettuce client's {@code ClientResources}: exponential from 50 ms up to {@code max}.
     * Lettuce's default grows to 30 s, so a consumer could stay disconnected for several seconds after Redis was back
     * (the Spring Boot starter sets this through {@code rmq.redis.reconnect-delay-max}).
     */
    public static Delay reconnectDelay(Duration max) {
        return Delay.exponential(Duration.ofMillis(50), max, 2, TimeUnit.MILLISECONDS);
    }


    /**
     * The failure of a call for {@code key}, named by topic, slot and node when the connection that serves the key is
     * down: a call rejected before it was sent (RMQ's client does not queue calls for a disconnected node, see
     * {@link RedisClientSettings}) is an {@link RmqUnavailableException}; a call cut off by the loss of its
     * connection while in flight an {@link RmqException} that says its outcome is unknown. Other failures as they are.
     */
    Throwable unavailableIfDisconnected(Throwable failure, byte[] key, String what) {
        Throwable cause = unwrap(failure);
        if (cause instanceof RmqException) {
            return cause;
        }
        String message = String.valueOf(cause.getMessage());
        boolean rejected = cause instanceof io.lettuce.core.RedisConnectionException
                || cause instanceof io.lettuce.core.RedisException && message.startsWith("Currently not connected");
        boolean cutOff = cause instanceof io.lettuce.core.RedisException && message.startsWith("Connection disconnected");
        if (!rejected && !cutOff) {
            return cause;
        }
        String node = addressOfNodeServing(key);
        String connectionTo = "the connection to Redis" + (node == null ? "" : " node " + node) + " that serves "
                + describeKey(key);
        if (rejected) {
            return RmqUnavailableException.disconnected(connectionTo + " is down (" + message + ")", what, cause);
        }
        return new RmqException(what + " was cut off by the loss of " + connectionTo + " while in flight: it may or"
                + " may not have been applied", cause);
    }

    /** {@code call}, failing as {@link #unavailableIfDisconnected} says when its connection is down. */
    <T> CompletableFuture<T> namingDisconnection(CompletableFuture<T> call, byte[] key, String what) {
        return call.exceptionallyCompose(ex -> CompletableFuture.failedFuture(unavailableIfDisconnected(ex, key, what)));
    }

    /** "topic 'orders' slot 5" for a key of RMQ's layout ({@code <prefix>:{orders:5}:store}), else the key. */
    static String describeKey(byte[] key) {
        String text = new String(key, java.nio.charset.StandardCharsets.UTF_8);
        int open = text.indexOf('{');
        int close = text.indexOf('}', open + 1);
        int colon = open < 0 || close < 0 ? -1 : text.lastIndexOf(':', close);
        if (colon <= open) {
            return "key '" + text + "'";
        }
        return "topic '" + text.substring(open + 1, colon) + "' slot " + text.substring(colon + 1, close);
    }

    /** host:port of the cluster master that serves {@code key} in the client's view; null standalone or unknown. */
    private @Nullable String addressOfNodeServing(byte[] key) {
        try {
            RedisClusterNode node = masterServing(key);
            return node == null || node.getUri() == null ? null : node.getUri().getHost() + ":" + node.getUri().getPort();
        }
        catch (RuntimeException ex) {
            return null;
        }
    }

    /**
     * Runs a script by its SHA; where the server lost its script cache (restart, failover, new node) it falls back
     * to EVAL with the source, which also caches it again.
     */
    <T> CompletableFuture<T> eval(RmqScript script, ScriptOutputType output, byte[][] keys, byte[]... args) {
        CompletableFuture<T> bySha = commands.dispatch(CommandType.EVALSHA, this.<T>output(output),
                EncodedArgs.script(script.shaBytes(), keys, args)).toCompletableFuture();
        return bySha.exceptionallyCompose(ex -> {
            Throwable cause = keys.length == 0 ? ex
                    : unavailableIfDisconnected(ex, keys[0], "a call of " + script.file());
            cause = unwrap(cause);
            if (cause instanceof RmqException) {
                return CompletableFuture.failedFuture(cause);
            }
            if (cause instanceof RedisNoScriptException || String.valueOf(cause.getMessage()).startsWith("NOSCRIPT")) {
                return commands.<T>eval(script.source(), output, keys, args).toCompletableFuture();
            }
            return CompletableFuture.failedFuture(new RmqException(
                    "Redis script " + script.file() + " failed: " + cause.getMessage(), cause));
        });
    }

    /** The reply decoder Lettuce's own evalsha would use for the output type. */
    @SuppressWarnings("unchecked")
    private <T> CommandOutput<byte[], byte[], T> output(ScriptOutputType type) {
        ByteArrayCodec codec = ByteArrayCodec.INSTANCE;
        return (CommandOutput<byte[], byte[], T>) switch (type) {
            case BOOLEAN -> new BooleanOutput<>(codec);
            case INTEGER -> new IntegerOutput<>(codec);
            case STATUS -> new StatusOutput<>(codec);
            case MULTI -> new NestedMultiOutput<>(codec);
            case VALUE -> new ValueOutput<>(codec);
            case OBJECT -> new ObjectOutput<>(codec);
        };
    }

    /** Waits for a future with the client's sync timeout, unwrapping failures. */
    public static <T> T await(CompletableFuture<T> future, String what) {
        return await(future, what, TimeUnit.SECONDS.toMillis(SYNC_TIMEOUT_SECONDS));
    }

    /** Waits at most {@code millis} for a future, unwrapping failures; a timeout is an {@link RmqTimeoutException}. */
    public static <T> T await(CompletableFuture<T> future, String what, long millis) {
        try {
            return future.get(millis, TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new RmqException("Interrupted while " + what, ex);
        }
        catch (ExecutionException ex) {
            throw failure(ex.getCause(), what, millis);
        }
        catch (TimeoutException ex) {
            throw failure(ex, what, millis);
        }
    }

    /**
     * A future's failure as {@link #await} throws it, for a caller that does not wait ({@code orTimeout} of
     * {@code millis}): unwrapped, and a timeout says the outcome is unknown.
     */
    public static RuntimeException failure(Throwable error, String what, long millis) {
        Throwable cause = unwrap(error);
        if (cause instanceof TimeoutException) {
            // the call may have reached Redis and run there: a caller must not take it as not done (nor as done)
            return new io.rmq.core.RmqTimeoutException("Timed out after " + millis + " ms " + what
                    + ": no reply came, so its outcome is unknown (it may or may not have been applied)");
        }
        if (cause instanceof RmqUnavailableException unavailable) {
            return unavailable.during(what);
        }
        if (cause instanceof RuntimeException runtime) {
            return runtime;
        }
        return new RmqException("Failed " + what + ": " + cause, cause);
    }

    @Override
    public void close() {
        closed = true;
        // Spring stops the connection factory (shutting its client down) before it destroys this bean
        StatefulConnection<byte[], byte[]> open = connection;
        if (open != null && open.isOpen()) {
            open.close();
        }
        synchronized (transactionLock) {
            ExecutorService writer = transactionWriter;
            if (writer != null) {
                writer.shutdown();
            }
            StatefulRedisConnection<byte[], byte[]> transactional = transactionConnection;
            if (transactional != null && transactional.isOpen()) {
                transactional.close();
            }
        }
    }
}