package io.rmq.spring.listener;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.rmq.container.ListenerContainer;
import org.springframework.context.SmartLifecycle;
import org.jspecify.annotations.Nullable;

/**
 * Holds the listener containers by id; starts those with auto-startup with the context and stops all gracefully
 * before the Redis connection goes. Use it to start, stop, pause and resume listeners at runtime. Logs one INFO line
 * when it starts (the engine, see {@link #setEngineDescription}, and the listeners) and one when it stops (how many
 * listeners, how long, what was handed back or left behind).
 */
public class RmqListenerEndpointRegistry implements SmartLifecycle {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RmqListenerEndpointRegistry.class);

    /** Late start, early stop: after Redis is up, before it goes. */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 100;

    private final Map<String, ListenerContainer> containers = new ConcurrentHashMap<>();
    private final Set<String> autoStartup = ConcurrentHashMap.newKeySet();
    private volatile boolean running;
    /** What the start line says about the engine (Redis, key prefix, topics); null: nothing. */
    private volatile java.util.function.@Nullable Supplier<String> engineDescription;

    /** Registers a container; its id must be unique. Starts it at once if the registry runs and it auto-starts. */
    public void registerListenerContainer(ListenerContainer container, boolean startWithContext) {
        ListenerContainer previous = containers.putIfAbsent(container.id(), container);
        if (previous != null) {
            throw new IllegalStateException("Another @RmqListener container already has the id '" + container.id()
                    + "' (topic '" + previous.topic() + "'); set a unique id");
        }
        if (startWithContext) {
            autoStartup.add(container.id());
            if (running) {
                container.start();
            }
        }
    }

    public @Nullable ListenerContainer getListenerContainer(String id) {
        return containers.get(id);
    }

    public Set<String> getListenerContainerIds() {
        return Set.copyOf(containers.keySet());
    }

    public Collection<ListenerContainer> getListenerContainers() {
        return List.copyOf(containers.values());
    }

    /**
     * Pauses a listener: it stops taking messages and finishes what it has taken (see {@link ListenerContainer#pause()});
     * it stays paused across a stop and start until {@link #resume(String)}. Idempotent.
     *
     * @throws IllegalArgumentException when no listener has that id
     */
    public void pause(String id) {
        container(id).pause();
    }

    /** Resumes a paused listener: it takes messages again at once. Idempotent. */
    public void resume(String id) {
        container(id).resume();
    }

    /** A snapshot of one listener's state; throws {@link IllegalArgumentException} for an unknown id. */
    public RmqListenerState getListenerState(String id) {
        return RmqListenerState.of(container(id), autoStartup.contains(id));
    }

    /** Snapshots of every registered listener, by id. */
    public List<RmqListenerState> getListenerStates() {
        return containers.values().stream().sorted(java.util.Comparator.comparing(ListenerContainer::id))
                .map(c -> RmqListenerState.of(c, autoStartup.contains(c.id()))).toList();
    }

    private ListenerContainer container(String id) {
        ListenerContainer container = containers.get(id);
        if (container == null) {
            throw new IllegalArgumentException("No RMQ listener with the id '" + id + "'; the listeners are "
                    + new java.util.TreeSet<>(containers.keySet()));
        }
        return container;
    }

    /**
     * Sets what the INFO line at start says about the engine (Redis mode and addresses, key prefix, topics); the
     * registry adds the listeners. Must not reach Redis: the application may start while Redis is down.
     */
    public void setEngineDescription(java.util.function.Supplier<String> engineDescription) {
        this.engineDescription = engineDescription;
    }

    @Override
    public void start() {
        for (ListenerContainer container : containers.values()) {
            if (autoStartup.contains(container.id())) {
                container.start();
            }
        }
        running = true;
        log.info("RMQ started: {}; {}", describeEngine(), describeListeners());
    }

    private String describeEngine() {
        java.util.function.Supplier<String> description = engineDescription;
        if (description == null) {
            return "engine not described";
        }
        try {
            return description.get();
        }
        catch (RuntimeException ex) {
            return "engine not described (" + ex.getMessage() + ")";
        }
    }

    private String describeListeners() {
        List<RmqListenerState> states = getListenerStates();
        if (states.isEmpty()) {
            return "no listeners";
        }
        StringBuilder line = new StringBuilder().append(states.size()).append(" listener(s) [");
        for (int i = 0; i < states.size(); i++) {
            RmqListenerState state = states.get(i);
            line.append(i == 0 ? "" : ", ").append(state.id()).append(" -> ").append(state.topic()).append(" (")
                    .append(state.mode()).append(", concurrency ").append(state.concurrency());
            if (state.status() != RmqListenerState.Status.RUNNING) {
                line.append(", ").append(state.status().name().toLowerCase(java.util.Locale.ROOT));
            }
            line.append(')');
        }
        return line.append(']').toString();
    }

    @Override
    public void stop() {
        running = false;
        long started = System.nanoTime();
        List<ListenerContainer> stopped = containers.values().stream().filter(ListenerContainer::isRunning).toList();
        stopAll();
        long tookMillis = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        int messages = 0;
        int slots = 0;
        int abandoned = 0;
        for (ListenerContainer container : stopped) {
            if (container.mode() == io.rmq.core.ConsumeMode.ORDERLY) {
                slots += container.handedBackOnStop();
            }
            else {
                messages += container.handedBackOnStop();
            }
            abandoned += container.abandonedOnStop();
        }
        String handedBack = messages == 0 && slots == 0 ? "nothing"
                : messages + " unstarted message(s) returned to the store, " + slots + " ORDERLY slot(s) released";
        log.info("RMQ stopped {} listener(s) in {} ms; handed back: {}; still running after the shutdown timeout: {}",
                stopped.size(), tookMillis, handedBack, abandoned == 0 ? "nothing"
                        : abandoned + " (their messages are redelivered after their lease, their slots taken over)");
    }

    private void stopAll() {
        // stop in parallel so the shutdown timeout applies once, not once per container
        List<Thread> stoppers = new java.util.ArrayList<>();
        for (ListenerContainer container : containers.values()) {
            Thread stopper = new Thread(container::stop, "rmq-stop-" + container.id());
            stoppers.add(stopper);
            stopper.start();
        }
        for (Thread stopper : stoppers) {
            try {
                stopper.join();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
