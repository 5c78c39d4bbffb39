package io.rmq.instances.internal;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.rmq.core.internal.BackgroundTask;
import io.rmq.consumer.Delivery;
import io.rmq.container.ListenerContainer;
import io.rmq.instances.ClusterPause;
import io.rmq.instances.InstanceSettings;
import io.rmq.instances.RmqInstance;
import io.rmq.instances.RmqInstances;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedis;
import io.rmq.redis.internal.RmqRedisInstances;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@link RmqInstances} of an engine: the heartbeat, the description it writes, and the pauses it reads back and
 * applies. Threads: the heartbeat runs on this registry's own thread ({@code rmq-instances}), which alone applies the
 * pauses it read to the containers; {@link #start}, {@link #close} and the reads and changes run on callers' threads.
 * {@code settings}, {@code id} and {@code startedAt} are written once by {@link #start}.
 */
public final class DefaultRmqInstances implements RmqInstances {

    private static final Logger log = LoggerFactory.getLogger(RmqInstances.class);
    /** The heartbeat's name as a background task (logs, and tests that make it fail). */
    private static final String HEARTBEAT_TASK = "instance heartbeat";

    /** How long {@link #start} waits for the first heartbeat's answer (the pauses to apply to listeners made next). */
    static final long FIRST_BEAT_WAIT_MILLIS = 2000;

    private static final String VERSION = version();
    /** Looked up once: a host name lookup may be slow. */
    private static final String HOST = host();
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final RmqRedisInstances redis;
    private final Supplier<Collection<ListenerContainer>> containers;
    private final BusyHandlers busy = new BusyHandlers();

    private volatile @Nullable InstanceSettings settings;
    private volatile @Nullable String id;
    private volatile long startedAt;
    private volatile @Nullable ScheduledExecutorService beats;
    /** The pauses the latest beat read (written by the heartbeat thread, read when a container is made). */
    private volatile Map<String, String> knownPauses = Map.of();
    private volatile boolean failing;
    /** The heartbeat under the guard every background task has (an Error in a beat ends no schedule). */
    private final BackgroundTask heartbeat = BackgroundTask.of(HEARTBEAT_TASK, this::beatSafely);

    /**
     * Made by the engine ({@code Rmq.instances()}).
     *
     * @param containers the engine's listener containers now
     */
    public DefaultRmqInstances(RmqRedis redis, Supplier<Collection<ListenerContainer>> containers) {
        this.redis = new RmqRedisInstances(redis);
        this.containers = containers;
    }

    @Override
    public synchronized void start(InstanceSettings settings) {
        if (beats != null) {
            return;
        }
        this.settings = settings;
        this.id = newId();
        this.startedAt = System.currentTimeMillis();
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "rmq-instances");
            thread.setDaemon(true);
            return thread;
        });
        beats = executor;
        long every = settings.heartbeat().toMillis();
        Future<?> first = executor.submit(heartbeat::runOnce);
        executor.scheduleWithFixedDelay(heartbeat.runnable(), every, every, TimeUnit.MILLISECONDS);
        log.info("RMQ instance {} of '{}' registers itself every {} ms", id, settings.application(), every);
        // the first beat is waited for (briefly), so that listeners made next start with the cluster-wide pauses
        // applied; with Redis unreachable they learn them from the first beat that gets through
        try {
            first.get(FIRST_BEAT_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException ex) {
            log.debug("RMQ instance {}: first heartbeat not answered yet ({})", id, ex.toString());
        }
    }

    @Override
    public boolean isStarted() {
        return beats != null;
    }

    @Override
    public @Nullable String id() {
        return id;
    }

    /**
     * What the engine's consumers report handler calls to while the registry runs: the busy handlers, or
     * {@link RmqInstrumentation#NONE} before {@link #start}.
     */
    public RmqInstrumentation consumerInstrumentation() {
        return beats == null ? RmqInstrumentation.NONE : busy;
    }

    /** Applies the cluster-wide pauses known now to a new container (before it takes anything). */
    public void adopt(ListenerContainer container) {
        if (beats != null) {
            apply(container, knownPauses);
        }
    }

    /** Leaves the registry: no more beats, the entry and description deleted. */
    @Override
    public synchronized void close() {
        ScheduledExecutorService executor = beats;
        if (executor == null) {
            return;
        }
        beats = null;
        executor.shutdownNow();
        try {
            executor.awaitTermination(2, TimeUnit.SECONDS);
            RedisGateway.await(redis.leave(id), "leaving the instance registry");
            log.info("RMQ instance {} left the registry", id);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (RuntimeException ex) {
            log.warn("RMQ instance {} could not leave the registry ({}); it ages out after {} missed beats", id,
                    RedisGateway.describe(ex), MISSED_BEATS);
        }
    }

    // ---------------------------------------------------------------- the heartbeat

    private void beatSafely() {
        try {
            beat();
            if (failing) {
                failing = false;
                log.info("RMQ instance {} beats again", id);
            }
        }
        catch (RuntimeException ex) {
            if (!failing) {
                failing = true;
                log.warn("RMQ instance {} could not send its heartbeat ({}); it retries every beat", id,
                        RedisGateway.describe(ex));
            }
        }
    }

    /**
     * One heartbeat. The description it sends was made before the pauses it reads back are applied, so when applying
     * them changes a listener's state the beat is sent once more at once: the registry shows the new state within
     * moments of the change, not one heartbeat later.
     */
    private void beat() {
        if (sendBeat()) {
            sendBeat();
        }
    }

    /** Sends the description and applies the pauses read back; true when that changed a listener's state. */
    private boolean sendBeat() {
        InstanceSettings s = settings;
        long ttl = s.heartbeat().toMillis() * MISSED_BEATS;
        String description = JSON.writeValueAsString(describe(s));
        RmqRedisInstances.Beat beat = RedisGateway.await(redis.beat(id, description, ttl), "sending a heartbeat");
        knownPauses = Map.copyOf(beat.pauses());
        boolean changed = false;
        for (ListenerContainer container : containers.get()) {
            changed |= apply(container, beat.pauses());
        }
        return changed;
    }

    /** Applies the pauses to one container; true when its cluster-wide pause changed. */
    private static boolean apply(ListenerContainer container, Map<String, String> pauses) {
        boolean paused = pauses.containsKey(listenerField(container.id()))
                || pauses.containsKey(topicField(container.topic()));
        if (container.isPausedCluster() != paused) {
            try {
                container.setPausedCluster(paused);
                return true;
            }
            catch (UnsupportedOperationException ex) {
                log.debug("RMQ listener '{}' cannot be paused cluster-wide", container.id());
            }
        }
        return false;
    }

    @Override
    public void reportSoon() {
        ScheduledExecutorService executor = beats;
        if (executor == null) {
            return;
        }
        try {
            executor.execute(heartbeat::runOnce);
        }
        catch (java.util.concurrent.RejectedExecutionException ex) {
            // closing
        }
    }

    /** Beats now (on the heartbeat thread) and waits for it, so a pause set here applies here at once. */
    void beatNow() {
        ScheduledExecutorService executor = beats;
        if (executor == null) {
            return;
        }
        try {
            Future<?> done = executor.submit(heartbeat::runOnce);
            done.get(10, TimeUnit.SECONDS);
        }
        catch (java.util.concurrent.RejectedExecutionException ex) {
            // closing
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException ex) {
            log.debug("RMQ instance {}: an immediate heartbeat did not finish", id, ex);
        }
    }

    /** The description published each beat (epoch ms for times, so any language reads it). */
    record Description(String id, String application, String host, long pid, String version, long startedAt,
            long heartbeatMillis, int busy, List<RmqInstance.Listener> listeners, List<RmqInstance.OwnedSlot> ownedSlots,
            List<Handled> handling, @Nullable List<Handled> prefetched) {
    }

    /** A busy handler's message (since: when its handler started) or a prefetched one (since 0) as published. */
    record Handled(String listener, String topic, int slot, String digest, @Nullable String id, long since) {
    }

    private Description describe(InstanceSettings s) {
        List<BusyHandlers.Call> calls = busy.now();
        Map<String, Set<Thread>> threadsByListener = new HashMap<>();
        Set<Thread> allThreads = new java.util.HashSet<>();
        List<Handled> handling = new ArrayList<>();
        for (BusyHandlers.Call call : calls) {
            threadsByListener.computeIfAbsent(call.listener(), l -> new java.util.HashSet<>()).add(call.thread());
            allThreads.add(call.thread());
            if (handling.size() < MAX_HANDLING) {
                Delivery d = call.delivery();
                handling.add(new Handled(call.listener(), d.topic(), d.slot(), RmqInstances.digest(d.member()), d.id(),
                        call.since()));
            }
        }
        List<RmqInstance.Listener> listeners = new ArrayList<>();
        List<RmqInstance.OwnedSlot> owned = new ArrayList<>();
        List<Handled> prefetched = new ArrayList<>();
        for (ListenerContainer c : containers.get()) {
            for (Delivery d : c.prefetched(MAX_PREFETCHED - prefetched.size())) {
                prefetched.add(new Handled(c.id(), d.topic(), d.slot(), RmqInstances.digest(d.member()), d.id(), 0));
            }
            String state = !c.isRunning() ? "stopped" : c.isPaused() ? "paused" : "running";
            listeners.add(new RmqInstance.Listener(c.id(), c.topic(), c.mode().name(), state, c.concurrency(),
                    threadsByListener.getOrDefault(c.id(), Set.of()).size(), c.isPausedHere(), c.isPausedCluster()));
            for (int slot : new TreeSet<>(c.ownedSlots())) {
                owned.add(new RmqInstance.OwnedSlot(c.topic(), slot));
            }
        }
        return new Description(id, s.application(), HOST, ProcessHandle.current().pid(), VERSION, startedAt,
                s.heartbeat().toMillis(), allThreads.size(), listeners, owned, handling, prefetched);
    }

    // ---------------------------------------------------------------- reads

    @Override
    public List<RmqInstance> list() {
        java.util.concurrent.CompletableFuture<Long> now = redis.now();
        Map<String, Long> live = RedisGateway.await(redis.live(), "reading the live instances");
        List<String> ids = new ArrayList<>(live.keySet());
        List<String> descriptions = RedisGateway.await(redis.descriptions(ids), "reading the instances");
        Instant readAt = Instant.ofEpochMilli(RedisGateway.await(now, "reading Redis's clock"));
        List<RmqInstance> out = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            String json = descriptions.get(i);
            if (json != null) { // else it expired: gone, not swept from the live list yet
                RmqInstance instance = parse(json, live.get(ids.get(i)), readAt);
                if (instance != null) {
                    out.add(instance);
                }
            }
        }
        out.sort(java.util.Comparator.comparing(RmqInstance::id));
        return out;
    }

    @Override
    public @Nullable RmqInstance get(String instanceId) {
        checkId(instanceId);
        return list().stream().filter(i -> i.id().equals(instanceId)).findFirst().orElse(null);
    }

    private static @Nullable RmqInstance parse(String json, long aliveUntil, Instant readAt) {
        try {
            Description d = JSON.readValue(json, Description.class);
            long lastSeen = aliveUntil - d.heartbeatMillis() * MISSED_BEATS;
            List<RmqInstance.Handling> handling = d.handling() == null ? List.of() : d.handling().stream()
                    .map(h -> new RmqInstance.Handling(h.listener(), h.topic(), h.slot(), h.digest(), h.id(),
                            Instant.ofEpochMilli(h.since()))).toList();
            List<RmqInstance.Prefetched> prefetched = d.prefetched() == null ? List.of() : d.prefetched().stream()
                    .map(h -> new RmqInstance.Prefetched(h.listener(), h.topic(), h.slot(), h.digest(), h.id()))
                    .toList();
            return new RmqInstance(d.id(), d.application(), d.host(), d.pid(), d.version(),
                    Instant.ofEpochMilli(d.startedAt()), Instant.ofEpochMilli(lastSeen), d.busy(),
                    d.listeners() == null ? List.of() : List.copyOf(d.listeners()),
                    d.ownedSlots() == null ? List.of() : List.copyOf(d.ownedSlots()), handling, prefetched, readAt);
        }
        catch (RuntimeException ex) {
            log.debug("RMQ skips an instance description it cannot read: {}", ex.toString());
            return null;
        }
    }

    // ---------------------------------------------------------------- cluster-wide pauses

    @Override
    public List<ClusterPause> pauses() {
        List<ClusterPause> out = new ArrayList<>();
        RedisGateway.await(redis.pauses(), "reading the cluster-wide pauses").forEach((field, value) -> {
            int colon = field.indexOf(':');
            int bar = value.indexOf('|');
            if (colon > 0 && bar > 0) {
                try {
                    out.add(new ClusterPause(field.substring(0, colon), field.substring(colon + 1),
                            Instant.ofEpochMilli(Long.parseLong(value.substring(0, bar))), value.substring(bar + 1)));
                }
                catch (NumberFormatException ex) {
                    log.debug("RMQ skips a pause it cannot read: {} = {}", field, value);
                }
            }
        });
        out.sort(java.util.Comparator.comparing(ClusterPause::kind).thenComparing(ClusterPause::name));
        return out;
    }

    @Override
    public boolean pauseListener(String listenerId, String by) {
        return pause(listenerField(checkName("listener", listenerId)), by);
    }

    @Override
    public boolean resumeListener(String listenerId) {
        return resume(listenerField(checkName("listener", listenerId)));
    }

    @Override
    public boolean pauseTopic(String topic, String by) {
        return pause(topicField(checkName("topic", topic)), by);
    }

    @Override
    public boolean resumeTopic(String topic) {
        return resume(topicField(checkName("topic", topic)));
    }

    private boolean pause(String field, String by) {
        String who = by == null || by.isBlank() ? "unknown" : by;
        boolean fresh = RedisGateway.await(redis.pause(field, System.currentTimeMillis() + "|" + who),
                "setting a cluster-wide pause");
        beatNow();
        return fresh;
    }

    private boolean resume(String field) {
        boolean was = RedisGateway.await(redis.resume(field), "lifting a cluster-wide pause");
        beatNow();
        return was;
    }

    static String listenerField(String listenerId) {
        return "listener:" + listenerId;
    }

    static String topicField(String topic) {
        return "topic:" + topic;
    }

    private static String checkName(String field, String name) {
        if (name == null || name.isEmpty() || name.length() > 200) {
            throw new RmqInvalidArgumentException(field, name, "must be 1 to 200 characters");
        }
        return name;
    }

    /** Fails unless {@code instanceId} could be an instance id (letters, digits, '.', '_', '-'; 1 to 200). */
    public static void checkId(String instanceId) {
        if (instanceId == null || !instanceId.matches("[A-Za-z0-9._-]{1,200}")) {
            throw new RmqInvalidArgumentException("instance", instanceId, "must be 1 to 200 letters, digits, '.',"
                    + " '_' or '-'");
        }
    }

    // ---------------------------------------------------------------- helpers

    private static String newId() {
        String host = HOST.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9.-]", "-");
        if (host.length() > 60) {
            host = host.substring(0, 60);
        }
        return host + "-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static String host() {
        try {
            return InetAddress.getLocalHost().getHostName();
        }
        catch (Exception ex) {
            String name = ManagementFactory.getRuntimeMXBean().getName(); // pid@host
            int at = name.indexOf('@');
            return at >= 0 ? name.substring(at + 1) : "unknown";
        }
    }

    /** The RMQ version from the jar's manifest; "dev" when running from classes. */
    private static String version() {
        String v = RmqInstances.class.getPackage() == null ? null
                : RmqInstances.class.getPackage().getImplementationVersion();
        return v == null || v.isBlank() ? "dev" : v;
    }

}
