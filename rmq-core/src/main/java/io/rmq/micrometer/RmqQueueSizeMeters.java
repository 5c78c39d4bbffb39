package io.rmq.micrometer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.rmq.Rmq;
import io.rmq.admin.TopicStats;
import io.rmq.container.ListenerContainer;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.internal.BackgroundTask;
import io.rmq.internal.RmqInternals;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedisGauges;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gauges of what waits in Redis, read on a schedule of their own and never per scrape (a scrape reads the last
 * snapshot):
 * <ul>
 * <li>{@code rmq.messages} ({@code messaging.system=rmq}, {@code messaging.destination.name=<topic>},
 * {@code rmq.state=waiting|in_flight|retrying|dead}) for every topic the engine knows, refreshed every
 * {@code interval}, the first round right after {@link #bindTo}; NaN until a topic's first figures came. The
 * instances of a fleet (engines on the same Redis and key prefix) take turns: one call of gauges.lua per round tells
 * which topics are this instance's to read with {@link io.rmq.admin.RmqAdmin#stats} (those nobody read within the
 * interval) and hands the figures the others wrote for the rest; what it read, it writes for them. So Redis serves
 * about one read of each topic per interval, whatever the number of instances, and the read of a topic with nothing
 * in Redis is one {@code EXISTS} on a standalone server (one per slot on a cluster). When that call fails, the
 * instance reads every topic itself;</li>
 * <li>{@code rmq.orderly.slots.owned} / {@code rmq.orderly.slots.suspended} (+ {@code rmq.listener.id}) for every
 * ORDERLY container, read from the container itself (no Redis).</li>
 * </ul>
 * Topics and containers that appear later get their gauges at the next round. {@link #close()} stops the schedule and
 * removes the gauges.
 */
public final class RmqQueueSizeMeters implements MeterBinder, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RmqQueueSizeMeters.class);
    /** The refresh's name as a background task (logs, and tests that make it fail). */
    private static final String TASK = "queue-size gauges";

    /** The states of {@code rmq.messages}, in the order of {@link TopicSizes#values}. */
    private static final String[] STATES = {"waiting", "in_flight", "retrying", "dead"};

    private final Rmq rmq;
    private final RmqRedisGauges shared;
    private final Duration interval;
    private final Supplier<? extends Collection<? extends ListenerContainer>> containers;
    private final Map<String, TopicSizes> topics = new ConcurrentHashMap<>();
    private final Map<ListenerContainer, Boolean> orderly = new ConcurrentHashMap<>();
    /** Every gauge so far, registered on every registry bound so far (guarded by this). */
    private final List<Gauge.Builder<?>> gauges = new ArrayList<>();
    private final List<MeterRegistry> registries = new ArrayList<>();
    private final List<Meter> meters = new ArrayList<>();
    private ScheduledExecutorService schedule;
    private volatile boolean failing;
    private volatile boolean closed;

    /**
     * @param rmq        the engine whose topics are measured
     * @param interval   how often the sizes are read from Redis
     * @param containers the listener containers whose ORDERLY slots are measured (read at every round)
     */
    public RmqQueueSizeMeters(Rmq rmq, Duration interval,
            Supplier<? extends Collection<? extends ListenerContainer>> containers) {
        if (interval == null || interval.toMillis() < 100) {
            throw new RmqInvalidArgumentException("queueSizesInterval", interval, "must be at least 100 ms");
        }
        this.rmq = rmq;
        this.shared = new RmqRedisGauges(RmqInternals.redis(rmq));
        this.interval = interval;
        this.containers = containers == null ? List::of : containers;
    }

    public RmqQueueSizeMeters(Rmq rmq, Duration interval) {
        this(rmq, interval, List::of);
    }

    /**
     * Registers the gauges on {@code registry} (the first binding also starts the schedule; a binder bound to several
     * registries reads Redis once for all of them).
     */
    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        if (closed || registries.contains(registry)) {
            return;
        }
        registries.add(registry);
        for (Gauge.Builder<?> gauge : gauges) {
            meters.add(gauge.register(registry));
        }
        if (schedule != null) {
            return;
        }
        schedule = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "rmq-queue-sizes");
            thread.setDaemon(true);
            return thread;
        });
        schedule.scheduleWithFixedDelay(BackgroundTask.of(TASK, this::refresh).runnable(), 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** One round: gauges for new topics and containers, then every topic's sizes from Redis. */
    void refresh() {
        try {
            for (ListenerContainer container : containers.get()) {
                if (container.mode() == ConsumeMode.ORDERLY && orderly.putIfAbsent(container, Boolean.TRUE) == null) {
                    registerOrderly(container);
                }
            }
            List<String> names = List.copyOf(rmq.topics().all().keySet());
            for (String topic : names) {
                topics.computeIfAbsent(topic, this::registerTopic);
            }
            if (!rmq.isConnected() || names.isEmpty()) {
                return; // not reached yet (connectLazily): nothing to read, and nothing to log
            }
            RmqRedisGauges.Turns turns = sharedTurns(names);
            Map<String, long[]> read = new LinkedHashMap<>();
            boolean failed = false;
            for (String topic : names) {
                TopicSizes sizes = topics.get(topic);
                long[] others = turns.shared().get(topic);
                if (!turns.mine().contains(topic)) {
                    if (others != null) {
                        sizes.set(others);
                    }
                    continue; // another instance reads it this interval: its figures come with a later call
                }
                try {
                    TopicStats stats = rmq.admin().stats(topic);
                    long[] figures = {stats.waiting(), stats.inFlight(), stats.retrying(), stats.dead()};
                    sizes.set(figures);
                    read.put(topic, figures);
                }
                catch (RuntimeException ex) {
                    if (closed) {
                        return; // close() interrupted this round: nothing to report
                    }
                    if (!failed && !failing) {
                        log.warn("RMQ could not read the queue sizes of topic '{}' for its gauges; they keep their"
                                + " last values until Redis answers again: {}", topic, RedisGateway.describe(ex));
                    }
                    failed = true;
                }
            }
            if (!read.isEmpty() && turns.now() > 0) {
                try {
                    RedisGateway.await(shared.publish(read, turns.now(), interval.toMillis()),
                            "sharing the queue sizes", interval.toMillis());
                }
                catch (RuntimeException ex) {
                    log.debug("RMQ could not share the queue sizes it read (other instances read them"
                            + " themselves): {}", RedisGateway.describe(ex));
                }
            }
            if (failing && !failed) {
                log.info("RMQ reads the queue sizes for its gauges again");
            }
            failing = failed;
        }
        catch (RuntimeException ex) {
            log.warn("RMQ's queue-size gauges could not be refreshed: {}", String.valueOf(ex));
        }
    }

    /**
     * Whose turn each topic's read is, from gauges.lua; when that call fails (Redis full, or unreachable: the reads
     * below then fail too and say so), every topic is this instance's, as before the fleet shared its reads.
     */
    private RmqRedisGauges.Turns sharedTurns(List<String> names) {
        try {
            return RedisGateway.await(shared.turns(interval.toMillis(), names), "taking turns at the queue sizes",
                    interval.toMillis());
        }
        catch (RuntimeException ex) {
            log.debug("RMQ reads every topic's queue sizes itself this round: {}", RedisGateway.describe(ex));
            return new RmqRedisGauges.Turns(0, Map.of(), new java.util.HashSet<>(names));
        }
    }

    private TopicSizes registerTopic(String topic) {
        TopicSizes sizes = new TopicSizes();
        Tags tags = Tags.of("messaging.system", MicrometerInstrumentation.SYSTEM, "messaging.destination.name", topic);
        for (int i = 0; i < STATES.length; i++) {
            int state = i;
            register(Gauge.builder("rmq.messages", sizes, s -> s.values[state])
                    .description("Messages of a topic in Redis by state, read every rmq.metrics.queue-sizes-interval")
                    .tags(tags).tag("rmq.state", STATES[i]).strongReference(true));
        }
        return sizes;
    }

    private void registerOrderly(ListenerContainer container) {
        Tags tags = Tags.of("messaging.system", MicrometerInstrumentation.SYSTEM, "messaging.destination.name",
                container.topic(), "rmq.listener.id", container.id());
        register(Gauge.builder("rmq.orderly.slots.owned", container, c -> c.ownedSlots().size())
                .description("Slots this ORDERLY listener owns").tags(tags).strongReference(true));
        register(Gauge.builder("rmq.orderly.slots.suspended", container, c -> c.suspendedSlots().size())
                .description("Owned slots whose head failed and waits for its retry").tags(tags)
                .strongReference(true));
    }

    private synchronized void register(Gauge.Builder<?> gauge) {
        if (closed) {
            return;
        }
        gauges.add(gauge);
        for (MeterRegistry registry : registries) {
            meters.add(gauge.register(registry));
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (schedule != null) {
            schedule.shutdownNow();
        }
        for (MeterRegistry registry : registries) {
            meters.forEach(registry::remove);
        }
        meters.clear();
        gauges.clear();
    }

    /** The last snapshot of a topic, in the order of {@link #STATES}; NaN before the first. */
    private static final class TopicSizes {

        volatile double[] values = {Double.NaN, Double.NaN, Double.NaN, Double.NaN};

        /** Figures in the order of {@link #STATES}, read here or by another instance of the fleet. */
        void set(long[] figures) {
            values = new double[] {figures[0], figures[1], figures[2], figures[3]};
        }
    }
}
