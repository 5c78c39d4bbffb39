package io.rmq.redis;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.rmq.core.RmqKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Listens on {@code <prefix>:wake}, where the scripts announce that a slot got a new first message, and tells the
 * sleeping consumers of that topic. A lost announcement only delays delivery until a consumer's next scheduled poll
 * (Lettuce resubscribes after reconnecting). One subscription per engine, opened on first use.
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
    }

    private static final Logger log = LoggerFactory.getLogger(WakeUpSubscriber.class);

    private final AbstractRedisClient client;
    private final String channel;
    private final Map<String, List<Listener>> listeners = new ConcurrentHashMap<>();
    private volatile StatefulRedisPubSubConnection<String, String> connection;

    public WakeUpSubscriber(AbstractRedisClient client, RmqKeys keys) {
        this.client = client;
        this.channel = keys.prefix() + ":wake";
    }

    public String channel() {
        return channel;
    }

    /** Registers a listener for a topic, subscribing on first use. */
    public synchronized void register(String topic, Listener listener) {
        listeners.computeIfAbsent(topic, t -> new CopyOnWriteArrayList<>()).add(listener);
        if (connection == null) {
            connection = connect();
            connection.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String ch, String message) {
                    dispatch(message);
                }
            });
            connection.sync().subscribe(channel);
        }
    }

    public void unregister(String topic, Listener listener) {
        List<Listener> forTopic = listeners.get(topic);
        if (forTopic != null) {
            forTopic.remove(listener);
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

    @Override
    public synchronized void close() {
        if (connection != null) {
            if (connection.isOpen()) {
                connection.close();
            }
            connection = null;
        }
    }
}
