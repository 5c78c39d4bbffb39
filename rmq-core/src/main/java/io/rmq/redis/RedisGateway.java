package io.rmq.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
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
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.resource.Delay;
import io.rmq.core.RmqException;

/**
 * One multiplexed Lettuce connection (standalone, Sentinel-discovered master, or Cluster) with binary keys and
 * values. Lettuce's async API pipelines by itself: commands issued without waiting share round trips.
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

    private final StatefulConnection<byte[], byte[]> connection;
    private final RedisClusterAsyncCommands<byte[], byte[]> commands;
    private final boolean cluster;

    private RedisGateway(StatefulConnection<byte[], byte[]> connection, RedisClusterAsyncCommands<byte[], byte[]> commands,
            boolean cluster) {
        this.connection = connection;
        this.commands = commands;
        this.cluster = cluster;
    }

    /** Opens a connection on a {@link RedisClient} or {@link RedisClusterClient}; the caller keeps owning the client. */
    public static RedisGateway connect(AbstractRedisClient client) {
        if (client instanceof RedisClusterClient clusterClient) {
            ensureFailoverDetection(clusterClient);
            StatefulRedisClusterConnection<byte[], byte[]> connection = clusterClient.connect(ByteArrayCodec.INSTANCE);
            return new RedisGateway(connection, connection.async(), true);
        }
        if (client instanceof RedisClient redisClient) {
            StatefulRedisConnection<byte[], byte[]> connection = redisClient.connect(ByteArrayCodec.INSTANCE);
            return new RedisGateway(connection, connection.async(), false);
        }
        throw new IllegalArgumentException("Unsupported Lettuce client " + client.getClass().getName());
    }

    /** The async commands; for standalone and cluster alike (cluster routes each command by its key's slot). */
    RedisClusterAsyncCommands<byte[], byte[]> commands() {
        return commands;
    }

    public boolean isCluster() {
        return cluster;
    }

    /** Loads every script into the script cache (all masters of a cluster) so EVALSHA finds them. */
    public void loadScripts() {
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
     * Topology refresh period, and least time between two adaptive refreshes, that RMQ sets on a cluster client that
     * has no refresh of its own. The first adaptive refresh after a master dies usually comes before the replica is
     * promoted; Lettuce's default of 30 s between adaptive refreshes then kept its slots unreachable for that long.
     */
    static final Duration REFRESH_PERIOD = Duration.ofSeconds(5);
    /** Reconnect attempts to one node after which an adaptive topology refresh runs. */
    static final int RECONNECTS_BEFORE_REFRESH = 2;

    /**
     * After a master fails over, a cluster client only learns where its slots went by refreshing its topology; with
     * Lettuce's defaults (no periodic refresh, and adaptive refresh only after several reconnect attempts that back
     * off exponentially) commands for the dead master's slots wait for minutes. Where the application configured
     * neither, RMQ turns on a periodic refresh and the adaptive triggers (the options belong to the client, so the
     * application's own connections benefit too; Spring Boot: {@code spring.data.redis.lettuce.cluster.refresh.*}).
     */
    static void ensureFailoverDetection(RedisClusterClient client) {
        ClusterClientOptions options = client.getOptions() instanceof ClusterClientOptions cluster ? cluster
                : ClusterClientOptions.builder(client.getOptions()).build();
        ClusterTopologyRefreshOptions refresh = options.getTopologyRefreshOptions();
        boolean periodic = refresh.isPeriodicRefreshEnabled();
        boolean reconnects = refresh.getAdaptiveRefreshTriggers()
                .contains(ClusterTopologyRefreshOptions.RefreshTrigger.PERSISTENT_RECONNECTS);
        if (periodic && reconnects) {
            return;
        }
        ClusterTopologyRefreshOptions.Builder builder = ClusterTopologyRefreshOptions.builder()
                .enablePeriodicRefresh(periodic ? refresh.getRefreshPeriod() : REFRESH_PERIOD)
                .enableAllAdaptiveRefreshTriggers()
                .refreshTriggersReconnectAttempts(reconnects ? refresh.getRefreshTriggersReconnectAttempts()
                        : RECONNECTS_BEFORE_REFRESH)
                .adaptiveRefreshTriggersTimeout(reconnects ? refresh.getAdaptiveRefreshTimeout() : REFRESH_PERIOD)
                .closeStaleConnections(refresh.isCloseStaleConnections())
                .dynamicRefreshSources(refresh.useDynamicRefreshSources());
        client.setOptions(options.mutate().topologyRefreshOptions(builder.build()).build());
        log.info("RMQ enabled cluster topology refresh on the Redis client (periodic every {}, adaptive on redirects"
                + " and after {} reconnect attempts) so that a failover is followed within seconds; configure"
                + " spring.data.redis.lettuce.cluster.refresh.* to choose your own",
                periodic ? refresh.getRefreshPeriod() : REFRESH_PERIOD, RECONNECTS_BEFORE_REFRESH);
    }

    /**
     * Runs a script by its SHA; where the server lost its script cache (restart, failover, new node) it falls back
     * to EVAL with the source, which also caches it again.
     */
    <T> CompletableFuture<T> eval(RmqScript script, ScriptOutputType output, byte[][] keys, byte[]... args) {
        CompletableFuture<T> bySha = commands.dispatch(CommandType.EVALSHA, this.<T>output(output),
                EncodedArgs.script(script.shaBytes(), keys, args)).toCompletableFuture();
        return bySha.exceptionallyCompose(ex -> {
            Throwable cause = ex instanceof CompletionException && ex.getCause() != null ? ex.getCause() : ex;
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
            Throwable cause = ex.getCause();
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new RmqException("Failed " + what + ": " + cause, cause);
        }
        catch (TimeoutException ex) {
            throw new io.rmq.core.RmqTimeoutException("Timed out after " + millis + " ms " + what);
        }
    }

    @Override
    public void close() {
        // Spring stops the connection factory (shutting its client down) before it destroys this bean
        if (connection.isOpen()) {
            connection.close();
        }
    }
}
