package io.rmq.spring.health;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.rmq.Rmq;
import io.rmq.admin.TopicStats;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.internal.RmqInternals;
import io.rmq.redis.internal.RedisFull;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.WakeUpSubscriber;
import io.rmq.redis.internal.RedisNodes.NodeCheck;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.spring.listener.RmqListenerState;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.jspecify.annotations.Nullable;

/**
 * RMQ's health ({@code /actuator/health/rmq}).
 * <p>
 * <b>DOWN</b> when Redis does not answer a PING through RMQ's own connection within the timeout (on a cluster, any
 * master), when a Redis node is full (over {@code maxmemory}: sends fail with {@code RmqRedisFullException} while
 * consumers drain it), when RMQ's Lua scripts are missing and cannot be loaded again, when the queue figures cannot be
 * read, when the wake-up subscription is down while listeners need it, when a listener that starts with the application
 * is stopped while the application runs (to take one out of service on purpose, pause it: a paused listener is reported
 * {@code PAUSED} and does not change the status), or when a listener's watchdog had to repair it since the previous
 * check (a stall: reported once, on the check that sees it).
 * <p>
 * <b>The threshold status</b> ({@code rmq.health.threshold-status}, UP by default) when a topic holds more dead
 * messages than {@code rmq.health.dead-threshold}, or a RANGE_MERGE / FIXED_TIME topic's oldest due message has waited
 * longer than {@code rmq.health.oldest-due-threshold}; the details list which ({@code thresholdsExceeded}).
 * <p>
 * Otherwise <b>UP</b>. Details: {@code redis} (per node: reachable, latency, scripts; per master: {@code memory} "used
 * of maxmemory", {@code maxmemoryPolicy}, {@code full}), {@code wakeUpSubscription}, {@code listeners} (per id: topic,
 * mode, status, concurrency, ORDERLY owned / suspended slots, stalls repaired) and {@code topics} (waiting, inFlight,
 * retrying, dead, oldestDue). Cost per computed result: one PING and one SCRIPT EXISTS and one INFO memory per master,
 * and one stats round per topic ({@code slotAmount} script calls, pipelined); a result younger than
 * {@code rmq.health.cache-time-to-live} is reused.
 */
public class RmqHealthIndicator implements HealthIndicator {

    private final Rmq rmq;
    private final @Nullable RmqListenerEndpointRegistry registry;
    private final Long deadThreshold;
    private final Duration oldestDueThreshold;
    private final Status thresholdStatus;
    private final long timeoutMillis;
    private final long cacheMillis;

    /** Stalls repaired per listener at the previous check (guarded by this). */
    private final Map<String, Long> stallsSeen = new HashMap<>();
    private Health cached;
    private long cachedAtNanos;

    /**
     * @param registry           the listener containers, or null
     * @param deadThreshold      dead messages per topic above which the threshold status is reported, or null
     * @param oldestDueThreshold how long a due message may wait before the threshold status is reported, or null
     * @param thresholdStatus    the status reported when a threshold is exceeded
     * @param timeout            the longest wait for Redis
     * @param cacheTimeToLive    how long a result is reused
     */
    public RmqHealthIndicator(Rmq rmq, @Nullable RmqListenerEndpointRegistry registry, Long deadThreshold,
            Duration oldestDueThreshold, Status thresholdStatus, Duration timeout, Duration cacheTimeToLive) {
        this.rmq = rmq;
        this.registry = registry;
        this.deadThreshold = deadThreshold;
        this.oldestDueThreshold = oldestDueThreshold;
        this.thresholdStatus = thresholdStatus;
        this.timeoutMillis = Math.max(1, timeout.toMillis());
        this.cacheMillis = cacheTimeToLive.toMillis();
        // listeners repaired before the first check count once, there
        if (registry != null) {
            registry.getListenerStates().forEach(l -> stallsSeen.put(l.id(), 0L));
        }
    }

    @Override
    public synchronized Health health() {
        long now = System.nanoTime();
        if (cached != null && now - cachedAtNanos < TimeUnit.MILLISECONDS.toNanos(cacheMillis)) {
            return cached;
        }
        cached = check();
        cachedAtNanos = System.nanoTime();
        return cached;
    }

    private Health check() {
        List<String> down = new ArrayList<>();
        List<String> exceeded = new ArrayList<>();
        Map<String, Object> details = new LinkedHashMap<>();

        // Redis, through RMQ's own connection
        List<NodeCheck> nodes = RmqInternals.redis(rmq).nodes().checkNodes(timeoutMillis);
        Map<String, Object> redis = new LinkedHashMap<>();
        boolean reachable = true;
        for (NodeCheck node : nodes) {
            Map<String, Object> n = new LinkedHashMap<>();
            n.put("reachable", node.reachable());
            if (node.latencyMillis() >= 0) {
                n.put("latencyMillis", node.latencyMillis());
            }
            n.put("scriptsLoaded", node.scriptsLoaded());
            if (node.scriptsReloaded() > 0) {
                n.put("scriptsReloaded", node.scriptsReloaded());
            }
            if (node.error() != null) {
                n.put("error", node.error());
                down.add("Redis " + node.node() + ": " + node.error());
                reachable = false;
            }
            redis.put(node.node(), n);
        }
        // a full Redis (over maxmemory): sends fail with RmqRedisFullException while consumers drain it
        if (reachable) {
            for (RedisFull.Memory memory : RedisFull.masters(RmqInternals.redis(rmq).nodes(), timeoutMillis)) {
                @SuppressWarnings("unchecked")
                Map<String, Object> n = (Map<String, Object>) redis.computeIfAbsent(memory.node(),
                        name -> new LinkedHashMap<String, Object>());
                n.put("memory", memory.human());
                n.put("maxmemoryPolicy", memory.policy());
                n.put("full", memory.full());
                if (memory.full()) {
                    down.add("Redis " + memory.node() + " is full (" + memory.human() + ", maxmemory-policy "
                            + memory.policy() + "): sends fail with RmqRedisFullException until consumers have"
                            + " drained it or maxmemory is raised");
                }
            }
        }
        details.put("redis", redis);

        // listeners and the wake-up subscription
        List<RmqListenerState> listeners = registry == null ? List.of() : registry.getListenerStates();
        WakeUpSubscriber wakeUps = RmqInternals.wakeUps(rmq);
        boolean listening = wakeUps.isActive();
        String subscription = !listening ? "not needed (no listener running)"
                : wakeUps.isSubscribed() ? "up" : "down";
        details.put("wakeUpSubscription", subscription);
        if (listening && !wakeUps.isSubscribed() && reachable) {
            down.add("the wake-up subscription is down");
        }
        Map<String, Object> byId = new LinkedHashMap<>();
        for (RmqListenerState listener : listeners) {
            Map<String, Object> l = new LinkedHashMap<>();
            l.put("topic", listener.topic());
            l.put("mode", listener.mode().name());
            l.put("status", listener.status().name());
            l.put("concurrency", listener.concurrency());
            if (listener.mode() == io.rmq.core.ConsumeMode.ORDERLY) {
                l.put("ownedSlots", listener.ownedSlots());
                l.put("suspendedSlots", listener.suspendedSlots());
            }
            l.put("stallsRepaired", listener.stallsRepaired());
            byId.put(listener.id(), l);
            if (listener.status() == RmqListenerState.Status.STOPPED && listener.autoStartup()
                    && registry.isRunning()) {
                down.add("listener '" + listener.id() + "' is stopped");
            }
            Long before = stallsSeen.put(listener.id(), listener.stallsRepaired());
            if (listener.stallsRepaired() > (before == null ? 0 : before)) {
                down.add("listener '" + listener.id() + "' was stalled and repaired by its watchdog ("
                        + (listener.stallsRepaired() - (before == null ? 0 : before)) + " time(s) since the last check)");
            }
        }
        details.put("listeners", byId);

        // queue figures: one stats round per topic, all at once, bounded by the timeout
        if (reachable) {
            Map<String, TopicDefinition> topics = new java.util.TreeMap<>(rmq.topics().all());
            Map<String, CompletableFuture<TopicStats>> reads = new LinkedHashMap<>();
            for (String topic : topics.keySet()) {
                CompletableFuture<TopicStats> read;
                try {
                    read = rmq.admin().statsAsync(topic);
                }
                catch (RuntimeException ex) {
                    read = CompletableFuture.failedFuture(ex);
                }
                reads.put(topic, read);
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
            Map<String, Object> byTopic = new LinkedHashMap<>();
            Instant now = Instant.now();
            for (Map.Entry<String, CompletableFuture<TopicStats>> read : reads.entrySet()) {
                String topic = read.getKey();
                TopicStats stats;
                try {
                    stats = RedisGateway.await(read.getValue(), "reading the queue figures of " + topic,
                            Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                }
                catch (RuntimeException ex) {
                    byTopic.put(topic, Map.of("error", String.valueOf(ex.getMessage())));
                    down.add("topic '" + topic + "': " + ex.getMessage());
                    continue;
                }
                Map<String, Object> t = new LinkedHashMap<>();
                t.put("type", topics.get(topic).type().name());
                t.put("waiting", stats.waiting());
                t.put("inFlight", stats.inFlight());
                t.put("retrying", stats.retrying());
                t.put("dead", stats.dead());
                if (topics.get(topic).type() != TopicType.PRIORITY) {
                    t.put("oldestDue", stats.oldestDue() == null ? null : stats.oldestDue().toString());
                }
                byTopic.put(topic, t);
                if (deadThreshold != null && stats.dead() > deadThreshold) {
                    exceeded.add("topic '" + topic + "' holds " + stats.dead() + " dead messages (threshold "
                            + deadThreshold + ")");
                }
                if (oldestDueThreshold != null && stats.oldestDue() != null
                        && stats.oldestDue().plus(oldestDueThreshold).isBefore(now)) {
                    exceeded.add("topic '" + topic + "': a message due at " + stats.oldestDue() + " has waited "
                            + Duration.between(stats.oldestDue(), now).toSeconds() + " s (threshold "
                            + oldestDueThreshold + ")");
                }
            }
            details.put("topics", byTopic);
        }

        Status status = !down.isEmpty() ? Status.DOWN : !exceeded.isEmpty() ? thresholdStatus : Status.UP;
        Health.Builder health = Health.status(status);
        if (!down.isEmpty()) {
            health.withDetail("problems", down);
        }
        if (!exceeded.isEmpty()) {
            health.withDetail("thresholdsExceeded", exceeded);
        }
        return health.withDetails(details).build();
    }
}
