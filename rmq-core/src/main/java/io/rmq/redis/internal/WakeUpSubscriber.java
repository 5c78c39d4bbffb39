package io.rmq.redis.internal;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.rmq.core.internal.RmqKeys;
import io.rmq.core.internal.Timeouts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.jspecify.annotations.Nullable;

/**
 * Listens on {@code <prefix>:wake}, where the scripts announce that a slot got a new first message, and tells the
 * sleeping consumers of that topic. One subscription per engine, opened on first use.
 * <p>
 * A lost announcement only delays delivery until a consumer's next scheduled poll; still, the subscription is
 * watched (every second, without a Redis command): when it has been down and comes back, listeners are told
 * ({@link Listener#resubscribed()}) so they poll every slot at once instead of waiting for announcements they
 * missed. Lettuce reconnects and resubscribes by itself; but a cluster subscription is bound to one node, and when
 * that node is gone for good (a master that failed over) Lettuce would retry it for ever. So a subscription that
 * has been down for {@value #REPLACE_AFTER_MILLIS} ms is closed and opened again on another node, after a refresh
 * of the cluster's topology.
 */
public final class WakeUpSubscriber implements AutoCloseable {

    /** Receives announcements for one topic. */
    @FunctionalInterface
    public interface Listener {

        /**
         * @param slot the slot that got a new first message
         * @param due  when it is due (Redis clock, ms)
         */
        void wake(int slot, long due);

        /** The subscription was down and is back: announcements may have been missed meanwhile. */
        default void resubscribed() {
        }
    }

    /** How long a subscription may stay disconnected before it is replaced by one on another node. */
    static final long REPLACE_AFTER_MILLIS = 3000;
    private static final long CHECK_EVERY_MILLIS = 1000;
    /** The check's name as a background task (logs, and tests that make it fail). */
    public static final String CHECK_TASK = "wake-up check";

    private static final Logger log = LoggerFactory.getLogger(WakeUpSubscriber.class);

    private final AbstractRedisClient client;
    private final String channel;
    private final Map<String, List<Listener>> listeners = new ConcurrentHashMap<>();
    private volatile StatefulRedisPubSubConnection<String, String> connection;
    private ScheduledFuture<?> check;
    /** Local ms since the subscription has been seen down; 0 while it is up. Touched by the check only. */
    private long downSince;
    private final AtomicBoolean replacing = new AtomicBoolean();
    /** Failed replacements during the current outage (only the first is logged at WARN). */
    private volatile int failedReplacements;
    private volatile boolean closed;

    /** False while the engine has not reached Redis yet: then the subscription is opened by the check, later. */
    private final BooleanSupplier reachable;

    public WakeUpSubscriber(AbstractRedisClient client, RmqKeys keys) {
        this(client, keys, () -> true);
    }

    /**
     * @param reachable whether the engine's connection to Redis is open; while it is not, registering does not try
     *                  to subscribe (that could wait for a connect timeout), the check opens the subscription later
     */
    public WakeUpSubscriber(AbstractRedisClient client, RmqKeys keys, BooleanSupplier reachable) {
        this.client = client;
        this.channel = keys.prefix() + ":wake";
        this.reachable = reachable;
    }

    public String channel() {
        return channel;
    }

    /** Registers a listener for a topic, subscribing on first use. */
    public synchronized void register(String topic, Listener listener) {
        listeners.computeIfAbsent(topic, t -> new CopyOnWriteArrayList<>()).add(listener);
        if (check == null) {
            closed = false;
            if (reachable.getAsBoolean()) {
                connection = subscribe();
            }
            check = Timeouts.every(CHECK_TASK, CHECK_EVERY_MILLIS, this::check);
        }
    }

    private StatefulRedisPubSubConnection<String, String> subscribe() {
        StatefulRedisPubSubConnection<String, String> subscribed = connect();
        try {
            subscribed.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String ch, String message) {
                    dispatch(message);
                }
            });
            subscribed.sync().subscribe(channel);
            return subscribed;
        }
        catch (RuntimeException ex) {
            subscribed.close();
            throw ex;
        }
    }

    /** Watches the subscription (timer thread; never blocks: a replacement runs on a thread of its own). */
    private void check() {
        try {
            StatefulRedisPubSubConnection<String, String> current = connection;
            if (closed || replacing.get()) {
                return;
            }
            if (current == null) {
                // never subscribed: the engine started while Redis was down
                if (reachable.getAsBoolean() && replacing.compareAndSet(false, true)) {
                    Thread opener = new Thread(this::subscribeFirst, "rmq-wake-subscribe");
                    opener.setDaemon(true);
                    opener.start();
                }
                return;
            }
            long now = System.currentTimeMillis();
            if (current.isOpen()) {
                if (downSince != 0) {
                    failedReplacements = 0;
                    log.info("RMQ wake-up subscription on '{}' is back after {} ms; listeners poll every slot once",
                            channel, now - downSince);
                    downSince = 0;
                    notifyResubscribed();
                }
                return;
            }
            if (downSince == 0) {
                if (closed) {
                    return; // closed while this check ran: the subscription was closed on purpose
                }
                downSince = now;
                log.warn("RMQ wake-up subscription on '{}' is disconnected; listeners poll on their own schedule"
                        + " until it is back", channel);
            }
            else if (now - downSince >= REPLACE_AFTER_MILLIS && replacing.compareAndSet(false, true)) {
                Thread replacer = new Thread(() -> replace(current), "rmq-wake-resubscribe");
                replacer.setDaemon(true);
                replacer.start();
            }
        }
        catch (RuntimeException ex) {
            log.debug("RMQ wake-up subscription check failed", ex);
        }
    }

    /**
     * Opens a subscription and makes it the current one if the current one is still {@code expected}; closes it and
     * returns false when the subscriber was closed or another thread changed the subscription meanwhile.
     */
    private boolean subscribeInPlaceOf(@Nullable StatefulRedisPubSubConnection<String, String> expected) {
        StatefulRedisPubSubConnection<String, String> fresh = subscribe();
        synchronized (this) {
            if (closed || connection != expected) {
                fresh.close();
                return false;
            }
            connection = fresh;
        }
        return true;
    }

    /** Closes a subscription that stayed down and opens one on another node (fresh topology for a cluster). */
    private void replace(StatefulRedisPubSubConnection<String, String> stale) {
        try {
            if (client instanceof RedisClusterClient cluster) {
                cluster.refreshPartitions();
            }
            if (!subscribeInPlaceOf(stale)) {
                return;
            }
            stale.closeAsync();
            log.info("RMQ wake-up subscription on '{}' opened again on another connection", channel);
            // downSince stays set: the next check sees the new connection open and tells the listeners
        }
        catch (RuntimeException ex) {
            if (failedReplacements++ == 0) {
                log.warn("RMQ wake-up subscription on '{}' could not be opened again yet (retrying every second): {}",
                        channel, String.valueOf(ex));
            }
            else {
                log.debug("RMQ wake-up subscription on '{}' still cannot be opened again", channel, ex);
            }
        }
        finally {
            replacing.set(false);
        }
    }

    /** Opens the first subscription once Redis is reachable; listeners then poll every slot once. */
    private void subscribeFirst() {
        try {
            if (!subscribeInPlaceOf(null)) {
                return;
            }
            log.info("RMQ wake-up subscription on '{}' opened", channel);
            notifyResubscribed();
        }
        catch (RuntimeException ex) {
            log.debug("RMQ wake-up subscription on '{}' cannot be opened yet (retrying every second)", channel, ex);
        }
        finally {
            replacing.set(false);
        }
    }

    private void notifyResubscribed() {
        for (List<Listener> forTopic : listeners.values()) {
            for (Listener listener : forTopic) {
                try {
                    listener.resubscribed();
                }
                catch (RuntimeException ex) {
                    log.warn("RMQ wake-up listener failed", ex);
                }
            }
        }
    }

    /**
     * Unregisters a listener. When none is left the subscription is closed (and opened again by the next
     * {@link #register}): at a graceful shutdown the listeners stop before the Redis client does, so the client's
     * shutdown is not mistaken for a lost subscription.
     */
    public synchronized void unregister(String topic, Listener listener) {
        List<Listener> forTopic = listeners.get(topic);
        if (forTopic != null) {
            forTopic.remove(listener);
        }
        if (listeners.values().stream().allMatch(List::isEmpty)) {
            unsubscribe();
        }
    }

    private StatefulRedisPubSubConnection<String, String> connect() {
        if (client instanceof RedisClusterClient cluster) {
            // classic PUBLISH is broadcast to every node of a cluster, so one node's subscription hears all slots
            return cluster.connectPubSub();
        }
        return ((RedisClient) client).connectPubSub();
    }

    /** Message format: "{@code <store key>|<due ms>}", store key "{@code <prefix>:{<topic>:<slot>}:store}". */
    void dispatch(String message) {
        try {
            int open = message.indexOf('{');
            int close = message.indexOf('}', open);
            int colon = message.lastIndexOf(':', close);
            int bar = message.lastIndexOf('|');
            if (open < 0 || close < 0 || colon <= open || bar < close) {
                return;
            }
            String topic = message.substring(open + 1, colon);
            List<Listener> forTopic = listeners.get(topic);
            if (forTopic == null || forTopic.isEmpty()) {
                return;
            }
            int slot = Integer.parseInt(message.substring(colon + 1, close));
            long due = (long) Double.parseDouble(message.substring(bar + 1));
            for (Listener listener : forTopic) {
                listener.wake(slot, due);
            }
        }
        catch (RuntimeException ex) {
            log.debug("Ignoring unreadable wake-up message '{}'", message, ex);
        }
    }

    /** Whether the subscription is wanted: some listener is registered (none: it is closed on purpose). */
    public synchronized boolean isActive() {
        return check != null;
    }

    /** Whether the subscription's connection is open now (announcements are heard). */
    public boolean isSubscribed() {
        StatefulRedisPubSubConnection<String, String> current = connection;
        return current != null && current.isOpen();
    }

    @Override
    public synchronized void close() {
        unsubscribe();
    }

    private void unsubscribe() {
        closed = true;
        if (check != null) {
            check.cancel(false);
            check = null;
        }
        if (connection != null) {
            if (connection.isOpen()) {
                connection.close();
            }
            connection = null;
        }
    }
}
