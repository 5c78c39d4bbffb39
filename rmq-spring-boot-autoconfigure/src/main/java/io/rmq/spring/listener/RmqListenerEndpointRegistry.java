package io.rmq.spring.listener;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.rmq.container.ListenerContainer;
import org.springframework.context.SmartLifecycle;

/**
 * Holds the listener containers by id; starts those with auto-startup with the context and stops all gracefully
 * before the Redis connection goes. Use it to start and stop listeners at runtime.
 */
public class RmqListenerEndpointRegistry implements SmartLifecycle {

    /** Late start, early stop: after Redis is up, before it goes. */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 100;

    private final Map<String, ListenerContainer> containers = new ConcurrentHashMap<>();
    private final Set<String> autoStartup = ConcurrentHashMap.newKeySet();
    private volatile boolean running;

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

    public ListenerContainer getListenerContainer(String id) {
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

    @Override
    public void start() {
        for (ListenerContainer container : containers.values()) {
            if (autoStartup.contains(container.id())) {
                container.start();
            }
        }
        running = true;
    }

    @Override
    public void stop() {
        running = false;
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
