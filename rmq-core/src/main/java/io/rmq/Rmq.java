package io.rmq;

import java.util.concurrent.TimeUnit;

import io.lettuce.core.AbstractRedisClient;
import io.rmq.admin.RmqAdmin;
import io.rmq.admin.internal.DefaultRmqAdmin;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.DeadLetterForwarder;
import io.rmq.consumer.DeadLetterStory;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.internal.DefaultRmqConsumer;
import io.rmq.consumer.BatchMessageHandler;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.container.internal.ListenerContainers;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.coordination.internal.RedisSlotCoordinator;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.internal.BackgroundTask;
import io.rmq.core.internal.RmqKeys;
import io.rmq.core.RmqUnavailableException;
import io.rmq.core.TopicConflictException;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicRegistry;
import io.rmq.core.TopicType;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.consumer.Delivery;
import io.rmq.internal.RmqInternals;
import io.rmq.producer.OutgoingMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import io.rmq.producer.RmqProducer;
import io.rmq.producer.internal.DefaultRmqProducer;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedis;
import io.rmq.redis.internal.SlotReports;
import io.rmq.redis.internal.RmqRedisAdmin;
import io.rmq.redis.internal.WakeUpSubscriber;
import io.rmq.observe.CompositeInstrumentation;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.observe.internal.HistoryCounter;
import io.rmq.observe.internal.HistoryFlusher;

/**
 * The RMQ engine, usable without Spring: one Redis connection, the topic registry, a producer, consumers and the
 * admin operations.
 *
 * <pre>
 * try (Rmq rmq = Rmq.create(RedisClient.create("redis://localhost"), RmqOptions.DEFAULT)) {
 *     rmq.defineTopic("orders", TopicType.FIXED_TIME, 16);
 *     rmq.producer().sendFixedTime("orders", order, deadline);
 *     RmqConsumer consumer = rmq.consumer("orders", ConsumerSettings.DEFAULT);
 *     consumer.pollAndHandle(Order.class, (o, delivery) -&gt; close(o));
 * }
 * </pre>
 */
public final class Rmq implements AutoCloseable {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Rmq.class);

    private final RedisGateway gateway;
    private final RmqRedis redis;
    private final RmqRedisAdmin redisAdmin;
    private final TopicRegistry topics;
    private final RmqOptions options;
    /** {@code options.instrumentation()}, guarded: what it throws is logged and never reaches the engine. */
    private final RmqInstrumentation instrumentation;
    private final DefaultRmqProducer producer;
    private final RmqAdmin admin;
    private final WakeUpSubscriber wakeUps;
    private final io.rmq.reply.RmqReplies replies;
    private final SlotCoordinator redisCoordinator;
    /** The listener containers made here (weakly held: a container dropped by its user is forgotten). */
    private final java.util.Set<ListenerContainer> containers = java.util.Collections.synchronizedSet(
            java.util.Collections.newSetFromMap(new java.util.WeakHashMap<>()));
    private final io.rmq.instances.internal.DefaultRmqInstances instances;
    /** Writes the history counts; null when the history is off. */
    private final @Nullable HistoryFlusher history;

    /** First and longest wait between two attempts of {@link #connectLazily} to reach Redis. */
    static final long FIRST_RETRY_MILLIS = 250;
    /** The connect loop's name as a background task (logs, and tests that make it fail). */
    private static final String CONNECT_TASK = "connect loop";
    static final long MAX_RETRY_MILLIS = 5_000;

    /**
     * Whether topics defined now go to Redis at once (always, for an engine made by {@link #create}); until then
     * {@link #defineTopic} keeps them here and the connector registers them. Written under {@code topicsLock}, so a
     * definition is either registered by the connector or by its caller, never by neither.
     */
    private volatile boolean topicsInRedis;
    private final Object topicsLock = new Object();
    private volatile Thread connector;
    private volatile boolean closed;

    static {
        // The engine plumbing, for RMQ's Spring layer and tests, without public accessors that return internal types
        RmqInternals.SEAM.register(new RmqInternals.Access() {
            @Override
            public RmqRedis redis(Rmq rmq) {
                return rmq.redis;
            }

            @Override
            public RmqRedisAdmin redisAdmin(Rmq rmq) {
                return rmq.redisAdmin;
            }

            @Override
            public WakeUpSubscriber wakeUps(Rmq rmq) {
                return rmq.wakeUps;
            }
        });
    }

    private Rmq(AbstractRedisClient client, RedisGateway gateway, RmqOptions options) {
        this.gateway = gateway;
        this.options = options;
        HistoryCounter counts = options.historyFlushInterval().isZero() ? null : new HistoryCounter();
        this.instrumentation = instrumentation(options.instrumentation(), counts);
        RmqInstrumentation reports = instrumentation;
        this.redis = new RmqRedis(gateway, new RmqKeys(options.keyPrefix()), new SlotReports() {
            @Override
            public void trimmed(String topic, int slot, long messages) {
                reports.deadTrimmed(topic, slot, messages);
            }

            @Override
            public void expired(String topic, int slot, long dropped, long dead) {
                if (dropped > 0) {
                    reports.expired(topic, slot, dropped, false);
                }
                if (dead > 0) {
                    reports.expired(topic, slot, dead, true);
                }
            }
        });
        this.topics = new TopicRegistry(
                definition -> RedisGateway.await(redis.defineTopic(definition), "registering " + definition.describe()),
                name -> RedisGateway.await(redis.topic(name), "reading the definition of topic '" + name + "'"));
        this.producer = new DefaultRmqProducer(redis, topics, options.codec(), options.maxBodyBytes(),
                options.limits(), instrumentation);
        this.redisAdmin = new RmqRedisAdmin(redis);
        this.admin = new DefaultRmqAdmin(redisAdmin, topics, options.codec());
        this.wakeUps = new WakeUpSubscriber(client, redis.keys(), gateway::isConnected);
        this.replies = new io.rmq.reply.internal.DefaultRmqReplies(client, redis, producer, options.codec());
        this.redisCoordinator = new RedisSlotCoordinator(redis);
        this.instances = new io.rmq.instances.internal.DefaultRmqInstances(redis, this::containers);
        this.history = counts == null ? null
                : new HistoryFlusher(counts, redisAdmin.history(), options.historyFlushInterval());
    }

    private java.util.Collection<ListenerContainer> containers() {
        synchronized (containers) {
            return List.copyOf(containers);
        }
    }

    /** Keeps a container made here for the instance registry and applies the cluster-wide pauses known now. */
    private ListenerContainer adopt(ListenerContainer container) {
        containers.add(container);
        instances.adopt(container);
        return container;
    }

    /**
     * The application's instrumentation, guarded, beside the history's counts. The counts alone are not wrapped: they
     * never throw, and a composite allocates scopes per send and per delivery.
     */
    private static RmqInstrumentation instrumentation(RmqInstrumentation application, @Nullable HistoryCounter counts) {
        if (counts == null) {
            return CompositeInstrumentation.guarded(application);
        }
        if (application == null || application == RmqInstrumentation.NONE) {
            return counts;
        }
        return CompositeInstrumentation.of(List.of(application, counts));
    }

    /**
     * Connects to Redis through a Lettuce {@code RedisClient} (standalone or Sentinel) or {@code RedisClusterClient}
     * and loads the scripts. The client stays the caller's, used as it is configured: {@link #close()} closes only
     * RMQ's connection. {@link io.rmq.redis.RmqRedisClient} builds a client with RMQ's own settings (reconnect, calls
     * for a disconnected node rejected at once, cluster topology refresh, dead nodes no longer dialled).
     */
    public static Rmq create(AbstractRedisClient client, RmqOptions options) {
        RedisGateway gateway = RedisGateway.connect(client);
        Rmq rmq = null;
        try {
            gateway.loadScripts();
            rmq = new Rmq(client, gateway, options);
            rmq.redis.checkPermissions();
            io.rmq.redis.internal.RedisFull.warnIfEvicting(rmq.redis.nodes());
            rmq.topicsInRedis = true;
            return rmq;
        }
        catch (RuntimeException ex) {
            if (rmq != null && rmq.history != null) {
                rmq.history.close(); // its thread; nothing was counted yet
            }
            gateway.close();
            throw ex;
        }
    }

    /**
     * As {@link #create}, but returns at once, whether Redis is reachable or not: a thread connects in the background,
     * retrying with exponential backoff (from {@value #FIRST_RETRY_MILLIS} ms up to {@value #MAX_RETRY_MILLIS} ms)
     * and logging one line when Redis cannot be reached and one when it is, not one per attempt. Until it is:
     * topics are defined here and registered in Redis (with the conflict check) once connected; listener containers
     * start and keep polling, so they begin consuming by themselves; every other call (a send, an admin operation)
     * fails at once with {@link RmqUnavailableException} instead of waiting. Once connected, Lettuce's own reconnect
     * takes over, as for {@link #create}.
     */
    public static Rmq connectLazily(AbstractRedisClient client, RmqOptions options) {
        Rmq rmq = new Rmq(client, RedisGateway.unconnected(client), options);
        Thread thread = new Thread(rmq::connectInBackground, "rmq-connect");
        thread.setDaemon(true);
        rmq.connector = thread;
        thread.start();
        return rmq;
    }

    /**
     * The connect loop under the guard every background task has: an Error thrown by an attempt (or after one) is
     * logged and the loop starts over after a pause, instead of ending the thread and leaving the engine unconnected.
     */
    private void connectInBackground() {
        BackgroundTask loop = BackgroundTask.of(CONNECT_TASK, this::connectUntilReached);
        long delay = FIRST_RETRY_MILLIS;
        while (!closed && !loop.runOnce()) {
            if (!pause(delay)) {
                return;
            }
            delay = Math.min(delay * 2, MAX_RETRY_MILLIS);
        }
    }

    private void connectUntilReached() {
        long started = System.nanoTime();
        long delay = FIRST_RETRY_MILLIS;
        int attempts = 0;
        long nextReminder = TimeUnit.MINUTES.toNanos(1);
        while (!closed && !gateway.isConnected()) {
            attempts++;
            try {
                gateway.open();
            }
            catch (RuntimeException ex) {
                long elapsed = System.nanoTime() - started;
                if (attempts == 1) {
                    log.warn("RMQ cannot reach Redis ({}); retrying with backoff up to {} s. Listeners wait and begin"
                            + " consuming once Redis is reachable; sends fail at once with RmqUnavailableException",
                            RedisGateway.describe(ex), MAX_RETRY_MILLIS / 1000);
                }
                else if (elapsed >= nextReminder) {
                    nextReminder += TimeUnit.MINUTES.toNanos(1);
                    log.warn("RMQ still cannot reach Redis after {} attempts in {} s ({})", attempts,
                            TimeUnit.NANOSECONDS.toSeconds(elapsed), RedisGateway.describe(ex));
                }
                else {
                    log.debug("RMQ attempt {} to reach Redis failed", attempts, ex);
                }
                if (!pause(delay)) {
                    return;
                }
                delay = Math.min(delay * 2, MAX_RETRY_MILLIS);
            }
        }
        if (closed) {
            return;
        }
        try {
            redis.checkPermissions();
        }
        catch (RuntimeException ex) {
            log.error("RMQ reached Redis, but: {}", ex.getMessage());
        }
        io.rmq.redis.internal.RedisFull.warnIfEvicting(redis.nodes());
        int registered = registerTopics();
        if (registered >= 0) {
            log.info("RMQ reached Redis after {} attempt(s) in {} ms and registered {} topic(s) defined meanwhile",
                    attempts, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), registered);
        }
    }

    /** Registers the topics defined while Redis was unreachable; -1 when the engine was closed first. */
    private int registerTopics() {
        synchronized (topicsLock) {
            topicsInRedis = true;
        }
        int total = topics.all().size();
        long delay = FIRST_RETRY_MILLIS;
        while (!closed) {
            try {
                for (TopicConflictException conflict : topics.registerPending()) {
                    log.error("RMQ cannot use a topic defined while Redis was unreachable: {}. Sends to it and new"
                            + " listeners of it fail with this conflict", conflict.getMessage());
                }
                return total;
            }
            catch (RuntimeException ex) {
                // Redis gone again right after the connection was opened: Lettuce reconnects; try again
                log.debug("RMQ could not register topics yet", ex);
                if (!pause(delay)) {
                    return -1;
                }
                delay = Math.min(delay * 2, MAX_RETRY_MILLIS);
            }
        }
        return -1;
    }

    private boolean pause(long millis) {
        try {
            Thread.sleep(millis);
            return !closed;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Whether the engine has reached Redis and registered the topics defined before (always true for an engine made
     * by {@link #create}).
     */
    public boolean isConnected() {
        return gateway.isConnected() && topicsInRedis && (connector == null || !connector.isAlive());
    }

    /**
     * Defines a topic (idempotent); fails when the name is defined differently here or in Redis. While an engine of
     * {@link #connectLazily} has not reached Redis, only the definitions made here are checked; Redis's are checked
     * when it is reached.
     */
    public TopicDefinition defineTopic(TopicDefinition definition) {
        synchronized (topicsLock) {
            if (!topicsInRedis) {
                return topics.defineLocally(definition);
            }
        }
        return topics.define(definition);
    }

    public TopicDefinition defineTopic(String name, TopicType type, int slotAmount) {
        return defineTopic(new TopicDefinition(name, type, slotAmount));
    }

    public TopicRegistry topics() {
        return topics;
    }

    public RmqProducer producer() {
        return producer;
    }

    /**
     * A consumer of a defined topic. A dead-letter topic in {@code settings.failures()} that is defined nowhere yet is
     * defined here as FIXED_TIME with the topic's slot amount.
     */
    public RmqConsumer consumer(String topic, ConsumerSettings settings) {
        TopicDefinition definition = topics.get(topic);
        String deadLetterTopic = settings.failures().deadLetterTopic();
        if (deadLetterTopic != null) {
            if (deadLetterTopic.equals(topic)) {
                throw new RmqInvalidArgumentException("deadLetterTopic", deadLetterTopic, "must differ from the topic"
                        + " it serves");
            }
            boolean known;
            try {
                known = topics.isKnown(deadLetterTopic);
            }
            catch (RmqUnavailableException ex) {
                known = false; // Redis not reached yet: defined here, checked against Redis once it is reached
            }
            if (!known) {
                defineTopic(new TopicDefinition(deadLetterTopic, TopicType.FIXED_TIME, definition.slotAmount()));
            }
        }
        return new DefaultRmqConsumer(redis, definition, settings, new DefaultRmqConsumer.Parts(options.codec(),
                new DeadLetters(), options.logBodyChars(),
                consumerInstrumentation(),
                options.propagateContext()));
    }

    /**
     * The engine's instrumentation, beside the registry's busy handlers while the registry runs (no composite around
     * a lone part: a composite allocates scopes per delivery).
     */
    private RmqInstrumentation consumerInstrumentation() {
        RmqInstrumentation busy = instances.consumerInstrumentation();
        return busy == RmqInstrumentation.NONE ? instrumentation : CompositeInstrumentation.of(
                List.of(instrumentation, busy));
    }

    /**
     * Sends a dead message to a dead-letter topic, due at once (FIXED_TIME: now; PRIORITY: the priority it had, else 0;
     * RANGE_MERGE: after 1 ms), with its payload, id, group (when stored) and headers and the story of its death as
     * {@code rmq_dlt_*} headers, then deletes it from the dead queue it died in. Never refused for its size: the
     * message is sent on as Redis holds it, without this instance's size limits, and RMQ's headers are bounded by
     * their own rule ({@link OutgoingMessage#MAX_DEAD_LETTER_HEADER_BYTES}).
     */
    private final class DeadLetters implements DeadLetterForwarder {

        @Override
        public CompletableFuture<Void> forward(Delivery delivery, String deadLetterTopic) {
            return forward(delivery, deadLetterTopic, null);
        }

        @Override
        public CompletableFuture<Void> forward(Delivery delivery, String deadLetterTopic,
                @Nullable DeadLetterStory story) {
            TopicDefinition target = topics.get(deadLetterTopic);
            TopicDefinition source = topics.get(delivery.topic());
            SlotKeys slot = redis.keys().slots(source)[delivery.slot()];
            return send(delivery, target, source, slot, story, story == null ? 0 : diedAt(slot, delivery, story));
        }

        /**
         * rmq_dlt_failed_at: the dead queue's died-at (Redis's clock), read on the caller's thread (which waits for
         * the forward anyway), so the send below stays there too; the consumer's estimate of Redis's clock when that
         * read fails or finds the message gone. A dying message pays this one read; never a failed forward.
         */
        private long diedAt(SlotKeys slot, Delivery delivery, DeadLetterStory story) {
            try {
                Double diedAt = RedisGateway.await(redisAdmin.deadScore(slot, delivery.member()),
                        "reading when " + delivery + " died");
                return diedAt == null ? story.failedAtMillis() : diedAt.longValue();
            }
            catch (RuntimeException ex) {
                return story.failedAtMillis();
            }
        }

        private CompletableFuture<Void> send(Delivery delivery, TopicDefinition target, TopicDefinition source,
                SlotKeys slot, @Nullable DeadLetterStory story, long failedAtMillis) {
            String deadLetterTopic = target.name();
            OutgoingMessage message = switch (target.type()) {
                case FIXED_TIME -> OutgoingMessage.fixedTime(deadLetterTopic, delivery.body(), Instant.now());
                case PRIORITY -> OutgoingMessage.priority(deadLetterTopic, delivery.body(),
                        source.type() == TopicType.PRIORITY ? (long) delivery.score() : 0);
                case RANGE_MERGE -> OutgoingMessage.rangeMerge(deadLetterTopic, delivery.body(), Duration.ofMillis(1));
            };
            Map<String, String> headers = new LinkedHashMap<>(delivery.headers());
            // a stored group travels as the dead letter's group (stored again if the dead-letter topic is ORDERLY)
            headers.remove(OutgoingMessage.GROUP_HEADER);
            headers.put("rmq_dlt_original_topic", delivery.topic());
            headers.put("rmq_dlt_original_slot", Integer.toString(delivery.slot()));
            if (story != null) {
                if (story.exception() != null) {
                    headers.put("rmq_dlt_exception", cutToBytes(story.exception(),
                            OutgoingMessage.MAX_DEAD_LETTER_HEADER_BYTES));
                }
                headers.put("rmq_dlt_exception_message", cutToBytes(story.reason(),
                        OutgoingMessage.MAX_DEAD_LETTER_HEADER_BYTES));
                headers.put("rmq_dlt_attempts", Integer.toString(story.attempts()));
                headers.put("rmq_dlt_failed_at", Long.toString(failedAtMillis));
            }
            message = message.withId(delivery.id()).withGroup(delivery.group()).withHeaders(headers);
            // as stored, whatever this instance's size limits (RMQ's headers never count against them)
            return producer.sendStoredAsync(message)
                    .thenCompose(sent -> redisAdmin.deadDelete(slot, 1, List.of(delivery.member())))
                    .thenApply(deleted -> null);
        }
    }

    /** {@code text} cut to at most {@code maxBytes} UTF-8 bytes, marked with "…" where cut. */
    static String cutToBytes(String text, int maxBytes) {
        if (text.getBytes(StandardCharsets.UTF_8).length <= maxBytes) {
            return text;
        }
        int end = Math.min(text.length(), Math.max(0, maxBytes - 3));
        while (end > 0 && text.substring(0, end).getBytes(StandardCharsets.UTF_8).length > maxBytes - 3) {
            end--;
        }
        if (end > 0 && Character.isHighSurrogate(text.charAt(end - 1))) {
            end--;
        }
        return text.substring(0, end) + "…";
    }

    /**
     * A listener container for a defined topic ({@code options.mode()}: CONCURRENT or ORDERLY; ORDERLY containers
     * share out the slots with the {@linkplain #slotCoordinator() Redis coordinator}). Not started.
     */
    public <T> ListenerContainer container(String topic, ConsumerSettings settings, java.lang.reflect.Type payloadType,
            MessageHandler<T> handler, ContainerOptions options) {
        return container(topic, settings, payloadType, handler, options, redisCoordinator);
    }

    /** As {@link #container(String, ConsumerSettings, java.lang.reflect.Type, MessageHandler, ContainerOptions)}, with another coordinator (e.g. ZooKeeper). */
    public <T> ListenerContainer container(String topic, ConsumerSettings settings, java.lang.reflect.Type payloadType,
            MessageHandler<T> handler, ContainerOptions options, SlotCoordinator coordinator) {
        declareConsumeMode(topic, options.mode());
        return adopt(ListenerContainers.create(consumer(topic, settings), wakeUps, coordinator, payloadType, handler,
                options));
    }

    /**
     * A batch listener container for a defined topic (CONCURRENT only): {@code handler} gets up to
     * {@code settings.batchSize()} deliveries at a time, those one pop took from one slot, converted to
     * {@code payloadType} each; they are acknowledged together when it returns (see {@link BatchMessageHandler} for
     * failures). ORDERLY options fail here, before anything is registered, with an error naming the listener. Not
     * started.
     */
    public <T> ListenerContainer batchContainer(String topic, ConsumerSettings settings,
            java.lang.reflect.Type payloadType, BatchMessageHandler<T> handler, ContainerOptions options) {
        io.rmq.container.internal.RmqListenerContainer.checkBatchable(options); // before anything is registered
        declareConsumeMode(topic, options.mode());
        return adopt(ListenerContainers.createBatch(consumer(topic, settings), wakeUps, payloadType, handler, options));
    }

    /**
     * Registers how a topic is consumed (the first listener's mode, cluster-wide); fails with
     * {@link io.rmq.core.TopicConflictException} naming both definitions when the topic is registered with the other
     * mode. {@link #container} does this; call it when building a container yourself. While an engine of
     * {@link #connectLazily} has not reached Redis, the mode is registered (and checked) once it is.
     */
    public TopicDefinition declareConsumeMode(String topic, io.rmq.core.ConsumeMode mode) {
        TopicDefinition definition = topics.get(topic);
        return defineTopic(definition.withMode(mode));
    }

    /** The default coordinator of ORDERLY consumers: membership and slot shares kept in Redis. */
    public SlotCoordinator slotCoordinator() {
        return redisCoordinator;
    }

    public RmqAdmin admin() {
        return admin;
    }

    /**
     * The instance registry: the running instances and the cluster-wide pauses of listeners and topics (see
     * docs/operations.md). This engine takes part once {@link io.rmq.instances.RmqInstances#start} is called (the
     * Spring layer does, unless {@code rmq.instances.enabled=false}), and leaves on {@link #close()}.
     */
    public io.rmq.instances.RmqInstances instances() {
        return instances;
    }

    public RmqOptions options() {
        return options;
    }

    /**
     * Request-reply: send a request and get the future of its reply ({@link io.rmq.reply.RmqReplies#request}); a
     * handler of requests sends its reply with {@link io.rmq.reply.RmqReplies#reply} (RMQ's Spring listeners do). Costs
     * nothing until the first request.
     */
    public io.rmq.reply.RmqReplies replies() {
        return replies;
    }

    @Override
    public void close() {
        instances.close(); // leaves while the connection is still open
        closed = true;
        Thread thread = connector;
        if (thread != null) {
            thread.interrupt();
        }
        if (history != null) {
            history.close(); // writes what was counted since the last interval, while the connection is open
        }
        redis.roster().close();
        replies.close(); // fails the requests still waiting; deletes the inbox while the connection is open
        wakeUps.close();
        gateway.close();
    }
}
