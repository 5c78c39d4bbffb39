package io.rmq.micrometer;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.rmq.consumer.Delivery;
import io.rmq.observe.RmqInstrumentation;
import org.jspecify.annotations.Nullable;

/**
 * RMQ's meters, named after OpenTelemetry's messaging conventions where one fits ({@code messaging.*}) and
 * {@code rmq.*} for the rest; every meter is tagged {@code messaging.system=rmq} and
 * {@code messaging.destination.name=<topic>}, a listener's also {@code rmq.listener.id}. Queue sizes and ORDERLY slot
 * gauges are {@link RmqQueueSizeMeters}.
 * <ul>
 * <li>{@code messaging.client.sent.messages} (counter; {@code messaging.operation.name=send}, {@code error.type}):
 * messages sent, by outcome</li>
 * <li>{@code rmq.send.messages} (counter; {@code rmq.send.result=added|merged}): what the sent messages became</li>
 * <li>{@code messaging.client.consumed.messages} (counter; listener, {@code messaging.operation.name=receive}):
 * deliveries a listener's pops took</li>
 * <li>{@code messaging.process.duration} (timer; listener, {@code messaging.operation.name=process},
 * {@code error.type}): handler time, conversion included</li>
 * <li>{@code messaging.client.operation.duration} (timer; {@code messaging.operation.name=send|receive|ack|nack|
 * extend}, {@code error.type}): RMQ's calls to Redis</li>
 * <li>{@code rmq.handled.messages} (counter; listener, {@code rmq.outcome=ack|retry|dead|dropped|fenced|cancelled}):
 * how deliveries ended</li>
 * <li>{@code rmq.delivery.lateness} (timer with fixed buckets, 1 ms to 1 h, {@link #LATENESS_BUCKETS}; listener):
 * handler start minus due time, time-typed topics only</li>
 * <li>{@code rmq.orderly.takeovers} (counter; listener): slots taken from an instance that had not released them</li>
 * <li>{@code rmq.ratelimit.wait} (timer; listener), {@code rmq.watchdog.repairs} (counter; listener),
 * {@code rmq.receive.failures} (counter; listener, {@code error.type})</li>
 * <li>{@code rmq.dead.trimmed} (counter): dead messages the dead-letter retention deleted (beyond the topic's most
 * count or older than its longest age), counted by the instance whose burial trimmed them</li>
 * </ul>
 * Meters are created on first use and cached: per topic, per (listener, topic), per outcome (an array by ordinal) and
 * per exception class, so an event costs a map lookup by an existing key (no string building) and the meter's own
 * update. {@code error.type} is the exception's simple class name, {@code none} on success.
 */
public final class MicrometerInstrumentation implements RmqInstrumentation {

    static final String SYSTEM = "rmq";
    static final String NONE_ERROR = "none";
    /** The operations of {@link #operation}, in the order of {@link TopicMeters#operations}. */
    private static final String[] OPERATIONS = {"send", "receive", "ack", "nack", "extend"};
    /** The buckets of {@code rmq.delivery.lateness}: 1 ms to 1 h, roughly 1-2-5 per decade. */
    public static final Duration[] LATENESS_BUCKETS = java.util.stream.LongStream.of(1, 2, 5, 10, 20, 50, 100, 200,
            500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 300_000, 3_600_000).mapToObj(Duration::ofMillis)
            .toArray(Duration[]::new);

    private final MeterRegistry registry;
    private final ConcurrentHashMap<String, TopicMeters> topics = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<ListenerKey, ListenerMeters> listeners = new ConcurrentHashMap<>();
    /** {@code rmq.dead.trimmed} by topic: created at a topic's first trim (most topics never have one). */
    private final ConcurrentHashMap<String, Counter> deadTrimmed = new ConcurrentHashMap<>();
    /** {@code rmq.expired.messages} by topic and where they went: created at a topic's first expiry. */
    private final ConcurrentHashMap<String, Counter> expired = new ConcurrentHashMap<>();
    /** {@code rmq.deduplicated.messages} by topic: created at a topic's first deduplicated send. */
    private final ConcurrentHashMap<String, Counter> deduplicated = new ConcurrentHashMap<>();

    public MicrometerInstrumentation(MeterRegistry registry) {
        this.registry = registry;
    }

    public MeterRegistry registry() {
        return registry;
    }

    // ---------------------------------------------------------------- producing

    @Override
    public SendScope sendStarted(String topic, int messages) {
        TopicMeters meters = topic(topic);
        return new SendScope() {
            @Override
            public void finished(int added, int merged, @Nullable Throwable error) {
                if (error == null) {
                    meters.sent.increment(messages);
                    if (added > 0) {
                        meters.added.increment(added);
                    }
                    if (merged > 0) {
                        meters.merged.increment(merged);
                    }
                }
                else {
                    meters.sentFailed(error).increment(messages);
                }
            }
        };
    }

    @Override
    public void operation(String operation, String topic, long nanos, @Nullable Throwable error) {
        int index = switch (operation) {
            case "send" -> 0;
            case "receive" -> 1;
            case "ack" -> 2;
            case "nack" -> 3;
            case "extend" -> 4;
            default -> -1;
        };
        if (index < 0) {
            return; // an operation this version does not know: not worth a meter of its own
        }
        TopicMeters meters = topic(topic);
        (error == null ? meters.operations[index] : meters.operationFailed(index, error))
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    // ---------------------------------------------------------------- consuming

    @Override
    public void popped(String listenerId, String topic, int slot, int messages, long nanos) {
        if (messages > 0) {
            listener(listenerId, topic).consumed.increment(messages);
        }
    }

    @Override
    public void popFailed(String listenerId, String topic, int slot, Throwable error) {
        listener(listenerId, topic).receiveFailed(error).increment();
    }

    @Override
    public HandleScope handleStarted(String listenerId, Delivery delivery, long latenessMillis) {
        ListenerMeters meters = listener(listenerId, delivery.topic());
        if (latenessMillis != Long.MIN_VALUE) {
            // early by a clock difference between hosts counts as on time (a timer takes no negative values)
            meters.lateness.record(Math.max(0, latenessMillis), TimeUnit.MILLISECONDS);
        }
        return new Handling(meters, System.nanoTime());
    }

    /** One delivery in a handler: its start, then its outcome. */
    private static final class Handling implements HandleScope {

        private final ListenerMeters meters;
        private final long started;

        Handling(ListenerMeters meters, long started) {
            this.meters = meters;
            this.started = started;
        }

        @Override
        public void handlerReturned(@Nullable Throwable error) {
            long nanos = System.nanoTime() - started;
            (error == null ? meters.processed : meters.processFailed(error)).record(nanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public void notStarted() {
            // no handler ran: no sample of handler time (its CANCELLED end is counted by settled)
        }

        @Override
        public void settled(Outcome outcome) {
            meters.handled[outcome.ordinal()].increment();
        }
    }

    @Override
    public void handedBack(String listenerId, String topic, int messages) {
        listener(listenerId, topic).handled[Outcome.CANCELLED.ordinal()].increment(messages);
    }

    @Override
    public void rateLimitWaited(String listenerId, String topic, long nanos) {
        listener(listenerId, topic).rateLimitWait.record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void watchdogRepaired(String listenerId, String topic) {
        listener(listenerId, topic).watchdogRepairs.increment();
    }

    @Override
    public void slotTakenOver(String listenerId, String topic, int slot) {
        listener(listenerId, topic).takeovers.increment();
    }

    @Override
    public void deadTrimmed(String topic, int slot, long messages) {
        deadTrimmed.computeIfAbsent(topic, t -> Counter.builder("rmq.dead.trimmed").description("Dead messages the"
                + " dead-letter retention deleted (beyond the topic's most count or older than its longest age)")
                .tags(Tags.of("messaging.system", SYSTEM, "messaging.destination.name", t)).register(registry))
                .increment(messages);
    }

    @Override
    public void expired(String topic, int slot, long messages, boolean toDead) {
        String to = toDead ? "dead" : "dropped";
        expired.computeIfAbsent(topic + '\n' + to, key -> Counter.builder("rmq.expired.messages").description("Messages"
                + " that expired before a handler saw them (dropped, or moved to the dead queue)")
                .tags(Tags.of("messaging.system", SYSTEM, "messaging.destination.name", topic, "rmq.expired.to", to))
                .register(registry)).increment(messages);
    }

    @Override
    public void deduplicated(String topic, long messages) {
        deduplicated.computeIfAbsent(topic, t -> Counter.builder("rmq.deduplicated.messages").description("Sends"
                + " dropped by a deduplication window: a message of their identity was handled within it")
                .tags(Tags.of("messaging.system", SYSTEM, "messaging.destination.name", t)).register(registry))
                .increment(messages);
    }

    // ---------------------------------------------------------------- meters, resolved once

    private TopicMeters topic(String topic) {
        TopicMeters meters = topics.get(topic);
        return meters != null ? meters : topics.computeIfAbsent(topic, TopicMeters::new);
    }

    private ListenerMeters listener(String listenerId, String topic) {
        ListenerKey key = new ListenerKey(listenerId, topic);
        ListenerMeters meters = listeners.get(key);
        return meters != null ? meters : listeners.computeIfAbsent(key, ListenerMeters::new);
    }

    /** A meter's {@code error.type}: the exception's simple class name (its full name for an anonymous class). */
    static String errorType(Throwable error) {
        String name = error.getClass().getSimpleName();
        return name.isEmpty() ? error.getClass().getName() : name;
    }

    private record ListenerKey(String listenerId, String topic) {
    }

    /** The meters of one topic (producing, and RMQ's Redis operations on it). */
    private final class TopicMeters {

        final Tags tags;
        final Counter sent;
        final Counter added;
        final Counter merged;
        final Timer[] operations = new Timer[OPERATIONS.length];
        final ConcurrentHashMap<Class<?>, Counter> sentFailures = new ConcurrentHashMap<>();
        @SuppressWarnings("unchecked")
        final ConcurrentHashMap<Class<?>, Timer>[] operationFailures = new ConcurrentHashMap[OPERATIONS.length];

        TopicMeters(String topic) {
            this.tags = Tags.of("messaging.system", SYSTEM, "messaging.destination.name", topic);
            this.sent = sentCounter(NONE_ERROR);
            this.added = Counter.builder("rmq.send.messages").description("Messages sent, by what they became: new"
                    + " (added) or merged into a waiting duplicate").tags(tags).tag("rmq.send.result", "added")
                    .register(registry);
            this.merged = Counter.builder("rmq.send.messages").description("Messages sent, by what they became: new"
                    + " (added) or merged into a waiting duplicate").tags(tags).tag("rmq.send.result", "merged")
                    .register(registry);
            for (int i = 0; i < OPERATIONS.length; i++) {
                operations[i] = operationTimer(i, NONE_ERROR);
                operationFailures[i] = new ConcurrentHashMap<>();
            }
        }

        private Counter sentCounter(String errorType) {
            return Counter.builder("messaging.client.sent.messages").description("Messages sent by RMQ's producer")
                    .tags(tags).tag("messaging.operation.name", "send").tag("error.type", errorType)
                    .register(registry);
        }

        private Timer operationTimer(int index, String errorType) {
            return Timer.builder("messaging.client.operation.duration").description("Duration of RMQ's calls to"
                    + " Redis (send, receive = a pop, ack, nack, lease extension)").tags(tags)
                    .tag("messaging.operation.name", OPERATIONS[index]).tag("error.type", errorType)
                    .register(registry);
        }

        Counter sentFailed(Throwable error) {
            Counter counter = sentFailures.get(error.getClass());
            return counter != null ? counter
                    : sentFailures.computeIfAbsent(error.getClass(), c -> sentCounter(errorType(error)));
        }

        Timer operationFailed(int index, Throwable error) {
            Timer timer = operationFailures[index].get(error.getClass());
            return timer != null ? timer
                    : operationFailures[index].computeIfAbsent(error.getClass(), c -> operationTimer(index, errorType(error)));
        }
    }

    /** The meters of one listener on its topic. */
    private final class ListenerMeters {

        final Tags tags;
        final Counter consumed;
        final Timer processed;
        final Counter[] handled = new Counter[Outcome.values().length];
        final Timer lateness;
        final Counter takeovers;
        final Timer rateLimitWait;
        final Counter watchdogRepairs;
        final ConcurrentHashMap<Class<?>, Timer> processFailures = new ConcurrentHashMap<>();
        final ConcurrentHashMap<Class<?>, Counter> receiveFailures = new ConcurrentHashMap<>();

        ListenerMeters(ListenerKey key) {
            this.tags = Tags.of("messaging.system", SYSTEM, "messaging.destination.name", key.topic(),
                    "rmq.listener.id", key.listenerId());
            this.consumed = Counter.builder("messaging.client.consumed.messages").description("Deliveries taken by a"
                    + " listener's pops").tags(tags).tag("messaging.operation.name", "receive").register(registry);
            this.processed = processTimer(NONE_ERROR);
            for (Outcome outcome : Outcome.values()) {
                handled[outcome.ordinal()] = Counter.builder("rmq.handled.messages").description("Deliveries by how"
                        + " they ended").tags(tags).tag("rmq.outcome", outcome.name().toLowerCase(java.util.Locale.ROOT))
                        .register(registry);
            }
            this.lateness = Timer.builder("rmq.delivery.lateness").description("Handler start minus the message's"
                    + " due time (RANGE_MERGE, FIXED_TIME)").tags(tags)
                    // fixed buckets (aggregable; percentiles server-side or estimated from them, as the dashboard does), not
                    // client-side percentiles: those cost ~1.4 µs per message with 8 handler threads on 2 cores (their
                    // recorder is contended), ~9 % of W1B; these buckets ~0.3 µs. Unlike a percentile histogram they
                    // are kept by every registry (SimpleMeterRegistry too). Boot's
                    // management.metrics.distribution.percentiles.rmq.delivery.lateness adds percentiles if wanted.
                    .serviceLevelObjectives(LATENESS_BUCKETS).register(registry);
            this.takeovers = Counter.builder("rmq.orderly.takeovers").description("ORDERLY slots taken from an"
                    + " instance that had not released them").tags(tags).register(registry);
            this.rateLimitWait = Timer.builder("rmq.ratelimit.wait").description("Waits for the topic's cluster-wide"
                    + " rate limit").tags(tags).register(registry);
            this.watchdogRepairs = Counter.builder("rmq.watchdog.repairs").description("Stalls a listener's watchdog"
                    + " found and repaired (each one a bug, logged as an ERROR)").tags(tags).register(registry);
        }

        private Timer processTimer(String errorType) {
            return Timer.builder("messaging.process.duration").description("Handler time, payload conversion"
                    + " included").tags(tags).tag("messaging.operation.name", "process").tag("error.type", errorType)
                    .register(registry);
        }

        Timer processFailed(Throwable error) {
            Timer timer = processFailures.get(error.getClass());
            return timer != null ? timer
                    : processFailures.computeIfAbsent(error.getClass(), c -> processTimer(errorType(error)));
        }

        Counter receiveFailed(Throwable error) {
            Counter counter = receiveFailures.get(error.getClass());
            return counter != null ? counter : receiveFailures.computeIfAbsent(error.getClass(),
                    c -> Counter.builder("rmq.receive.failures").description("Failed pops of a listener").tags(tags)
                            .tag("error.type", errorType(error)).register(registry));
        }
    }
}
