package io.rmq.spring.schedule;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

import io.rmq.Rmq;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.RmqUnavailableException;
import io.rmq.core.internal.BackgroundTask;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;
import org.jspecify.annotations.Nullable;

/**
 * Runs the application's schedules ({@code rmq.schedules.*} entries and {@code @RmqScheduled} methods) on this
 * instance. At start: checks every declaration, registers each definition in Redis (a definition that differs from the
 * one a live instance holds fails start-up, naming both), starts one listener per schedule on its firings' topic, and
 * queues the next firings — plus, for a {@code fire-once} schedule, the latest firing missed while every instance was
 * down. Then every {@value #TOP_UP_SECONDS} s (one thread, {@code rmq-schedules}, which owns nothing but its timer) it
 * says again that it holds its definitions and queues the next firings, so that the schedule goes on whichever
 * instances come and go.
 * <p>
 * Starts after the listener registry (and stops before it), in the phase after it.
 */
public class RmqScheduler implements SmartLifecycle {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RmqScheduler.class);

    /** How often each instance registers its definitions again and queues the next firings. */
    static final long TOP_UP_SECONDS = 10;
    /** The top-up's name as a background task (logs, and tests that make it fail). */
    static final String TOP_UP_TASK = "schedule top-up";

    /** How long a definition stays held after the last instance holding it said so: three top-ups. */
    static final Duration LIVENESS = Duration.ofSeconds(3 * TOP_UP_SECONDS);

    private final Rmq rmq;
    private final RmqListenerEndpointRegistry registry;
    private final List<ScheduleDeclaration> propertyDeclarations;
    private final java.util.function.Supplier<List<ScheduleDeclaration>> methodDeclarations;
    private final ScheduleEvents events;
    private final Duration shutdownTimeout;
    private final ScheduleStore store;
    private final FiringQueue queue;
    /** Written once, by {@link #start()}; read by any thread after. */
    private volatile Map<String, ScheduleDefinition> schedules = Map.of();
    /** Schedules whose definition Redis has accepted from this instance (the missed firing is queued once). */
    private final Map<String, Boolean> registered = new ConcurrentHashMap<>();
    /** Schedules whose definition a live instance holds differently: the conflict, for the endpoint. */
    private final Map<String, String> conflicts = new ConcurrentHashMap<>();
    private @Nullable ScheduledExecutorService timer;
    private volatile boolean running;
    /** Whether the schedules were checked and their listeners registered (once; the lifecycle may restart). */
    private boolean started;

    /**
     * @param propertyDeclarations the {@code rmq.schedules} entries
     * @param methodDeclarations   the {@code @RmqScheduled} methods, read at start (when every bean has been made)
     */
    public RmqScheduler(Rmq rmq, RmqListenerEndpointRegistry registry, List<ScheduleDeclaration> propertyDeclarations,
            java.util.function.Supplier<List<ScheduleDeclaration>> methodDeclarations, ScheduleEvents events,
            Duration shutdownTimeout) {
        this.rmq = rmq;
        this.registry = registry;
        this.propertyDeclarations = List.copyOf(propertyDeclarations);
        this.methodDeclarations = methodDeclarations;
        this.events = events;
        this.shutdownTimeout = shutdownTimeout;
        this.store = new ScheduleStore(rmq);
        this.queue = new FiringQueue(rmq);
        // entries are checked before anything connects, as other rmq.* properties are
        this.propertyDeclarations.forEach(ScheduleDeclaration::definition);
    }

    @Override
    public void start() {
        if (started) {
            // a restart of the context's lifecycle: the listeners restart with the registry; the timer restarts here
            startTimer();
            running = true;
            return;
        }
        Map<String, ScheduleDefinition> checked = new LinkedHashMap<>();
        List<ScheduleDeclaration> declarations = new ArrayList<>(propertyDeclarations);
        declarations.addAll(methodDeclarations.get());
        for (ScheduleDeclaration declaration : declarations) {
            ScheduleDefinition definition = declaration.definition();
            ScheduleDefinition other = checked.putIfAbsent(definition.name(), definition);
            if (other != null) {
                throw new RmqInvalidArgumentException(declaration.property() ? declaration.where()
                        : declaration.field("name"), definition.name(), "is declared twice in this application ("
                        + other.where() + " and " + definition.where() + "); schedule names are unique");
            }
        }
        for (ScheduleDefinition definition : checked.values()) {
            if (definition.action() instanceof ScheduleAction.SendToTopic send) {
                checkTopic(definition, send.topic());
            }
        }
        schedules = Map.copyOf(checked);
        if (checked.isEmpty()) {
            running = true;
            return;
        }
        for (ScheduleDefinition definition : checked.values()) {
            queue.define(definition);
            topUp(definition, true); // a conflict with a live instance fails start-up here
        }
        for (ScheduleDefinition definition : checked.values()) {
            ListenerContainer container = rmq.container(FiringQueue.topic(definition.name()), ConsumerSettings.DEFAULT,
                    String.class, new FiringHandler(definition, rmq, store, queue, events),
                    new ContainerOptions(FiringQueue.topic(definition.name()), 1, Duration.ofSeconds(30),
                            shutdownTimeout, threads("rmq-schedule-")));
            registry.registerListenerContainer(container, true);
        }
        started = true;
        startTimer();
        running = true;
        log.info("RMQ runs {} schedule(s): {}", checked.size(), checked.values().stream()
                .map(s -> s.name() + " (" + s.times().definition() + ", " + s.action().describe() + ")").toList());
    }

    private void startTimer() {
        if (schedules.isEmpty()) {
            return;
        }
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(threads("rmq-schedules"));
        executor.scheduleWithFixedDelay(BackgroundTask.of(TOP_UP_TASK, this::topUpAll).runnable(), TOP_UP_SECONDS, TOP_UP_SECONDS, TimeUnit.SECONDS);
        timer = executor;
    }

    private static ThreadFactory threads(String prefix) {
        CustomizableThreadFactory factory = new CustomizableThreadFactory(prefix);
        factory.setDaemon(true);
        return factory;
    }

    private void checkTopic(ScheduleDefinition definition, String topic) {
        if (rmq.topics().all().containsKey(topic)) {
            return;
        }
        try {
            rmq.topics().get(topic);
        }
        catch (RmqUnavailableException ex) {
            log.warn("RMQ cannot check yet that topic '{}' of schedule '{}' exists (Redis unreachable); a firing fails"
                    + " if it does not", topic, definition.name());
        }
        catch (RmqInvalidArgumentException ex) {
            throw new RmqInvalidArgumentException("rmq.schedules." + definition.name() + ".topic", topic, "is not"
                    + " defined here nor registered in Redis; define it (rmq.topics." + topic + ".type, or a listener)");
        }
    }

    private void topUpAll() {
        for (ScheduleDefinition definition : schedules.values()) {
            try {
                topUp(definition, false);
            }
            catch (RuntimeException ex) {
                log.warn("RMQ could not queue the next firings of schedule '{}': {}", definition.name(),
                        ex.getMessage());
            }
        }
    }

    /**
     * Says that this instance holds the schedule's definition and queues its next firings. A conflict fails at start
     * ({@code starting}); later (an instance with another definition started while this one was cut off from Redis) it
     * is logged, and this instance queues nothing until it is resolved.
     */
    private void topUp(ScheduleDefinition definition, boolean starting) {
        ScheduleStore.Registration registration;
        try {
            registration = store.register(definition.name(), definition.fingerprint(), LIVENESS);
        }
        catch (RuntimeException ex) {
            if (!starting) {
                throw ex;
            }
            log.warn("RMQ cannot register schedule '{}' in Redis yet ({}); it tries again every {} s", definition.name(),
                    ex.getMessage(), TOP_UP_SECONDS);
            return;
        }
        if (registration.conflict()) {
            String rule = "an instance seen " + registration.seenAgoMillis() + " ms ago runs schedule '"
                    + definition.name() + "' as: " + registration.registered() + ". Every instance must declare a"
                    + " schedule the same way; to change it, stop the instances that run the old definition (it is"
                    + " released " + LIVENESS.toSeconds() + " s after the last of them stops) or give the new one"
                    + " another name";
            conflicts.put(definition.name(), registration.registered() + "");
            if (starting) {
                throw new RmqInvalidArgumentException("schedule '" + definition.name() + "' (" + definition.where()
                        + ")", definition.fingerprint(), rule);
            }
            log.error("RMQ schedule '{}' is declared here as: {}; but {}. This instance queues none of its firings"
                    + " until that is resolved", definition.name(), definition.fingerprint(), rule);
            return;
        }
        conflicts.remove(definition.name());
        if (registered.putIfAbsent(definition.name(), Boolean.TRUE) == null
                && definition.misfire() == MisfirePolicy.FIRE_ONCE) {
            // the latest firing missed while no instance was there to take it, once, when this instance arrives
            long missed = definition.times().latestAtOrBefore(registration.now(),
                    Math.max(registration.last(), registration.since()));
            if (missed != FiringTimes.NONE) {
                // queued whether or not a copy is already there: the copies merge, a late one is dropped as a duplicate
                if (registration.now() - missed > definition.thresholdMillis()) {
                    log.info("RMQ schedule '{}' missed its firing at {} while no instance ran it; it fires once now"
                            + " (misfire policy fire-once)", definition.name(), Instant.ofEpochMilli(missed));
                }
                queue.queueMissed(definition, missed);
            }
        }
        queue.queueNext(definition, registration.last(), registration.now());
    }

    /** The schedules this instance runs, by name. */
    Map<String, ScheduleDefinition> schedules() {
        return schedules;
    }

    ScheduleStore store() {
        return store;
    }

    @Nullable String conflict(String name) {
        return conflicts.get(name);
    }

    @Override
    public void stop() {
        running = false;
        ScheduledExecutorService executor = timer;
        timer = null;
        if (executor != null) {
            executor.shutdownNow();
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return RmqListenerEndpointRegistry.PHASE + 1;
    }

    /** Stops queueing firings (the listeners close with the registry; Redis is the engine's). */
    public void close() {
        stop();
    }
}
