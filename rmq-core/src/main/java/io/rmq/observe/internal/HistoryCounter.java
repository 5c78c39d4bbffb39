package io.rmq.observe.internal;

import java.util.Collection;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import io.rmq.consumer.Delivery;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.redis.internal.RmqRedisHistory;
import org.jspecify.annotations.Nullable;

/**
 * Counts, per topic, what this engine sent, handled, failed and buried, for the history {@link HistoryFlusher} writes
 * to Redis. Called on senders', handlers' and Lettuce's threads: an event costs a map lookup and a
 * {@link LongAdder} increment, and allocates nothing once the topic has been seen (the per-topic counts object is
 * itself the send and handle scope). Counts only grow here; the flusher takes them with
 * {@link LongAdder#sumThenReset}, which loses no increment made meanwhile (each cell is swapped atomically).
 * <ul>
 * <li>sent: messages a send wrote (new or merged into a waiting duplicate), once Redis answered;</li>
 * <li>handled: deliveries handled and acknowledged;</li>
 * <li>failed: deliveries whose handler failed, however they ended (retry, dead, dropped);</li>
 * <li>dead: of those, the ones moved to the dead queue;</li>
 * <li>trimmed: dead messages the dead-letter retention deleted when this engine buried others.</li>
 * </ul>
 * Settlements refused by fencing and deliveries handed back unhandled count nowhere.
 */
public final class HistoryCounter implements RmqInstrumentation {

    private final ConcurrentHashMap<String, TopicCounts> topics = new ConcurrentHashMap<>();

    TopicCounts counts(String topic) {
        TopicCounts counts = topics.get(topic);
        return counts != null ? counts : topics.computeIfAbsent(topic, TopicCounts::new);
    }

    /** Every topic counted so far (a live view). */
    Collection<TopicCounts> topics() {
        return topics.values();
    }

    /** Counts only: the engine need not read its clocks for it. */
    @Override
    public boolean timed() {
        return false;
    }

    @Override
    public SendScope sendStarted(String topic, int messages) {
        return counts(topic);
    }

    @Override
    public void deadTrimmed(String topic, int slot, long messages) {
        counts(topic).trimmed.add(messages);
    }

    @Override
    public void expired(String topic, int slot, long messages, boolean toDead) {
        counts(topic).expired.add(messages);
    }

    @Override
    public HandleScope handleStarted(String listenerId, Delivery delivery, long latenessMillis) {
        return counts(delivery.topic());
    }

    /** One topic's counts since the flusher last took them; the scope of every send and handler call of the topic. */
    static final class TopicCounts implements SendScope, HandleScope {

        final String topic;
        private final LongAdder sent = new LongAdder();
        private final LongAdder handled = new LongAdder();
        private final LongAdder failed = new LongAdder();
        private final LongAdder dead = new LongAdder();
        private final LongAdder trimmed = new LongAdder();
        private final LongAdder expired = new LongAdder();

        TopicCounts(String topic) {
            this.topic = topic;
        }

        @Override
        public void finished(int added, int merged, @Nullable Throwable error) {
            if (error == null && added + merged > 0) {
                sent.add(added + merged);
            }
        }

        @Override
        public void settled(Outcome outcome) {
            switch (outcome) {
                case ACK -> handled.increment();
                case RETRY, DROPPED -> failed.increment();
                case DEAD -> {
                    failed.increment();
                    dead.increment();
                }
                default -> {
                    // FENCED: another delivery settles this message; CANCELLED: no handler ran
                }
            }
        }

        /** Adds what was counted since the last call to {@code into} and starts again from 0; true if any. */
        boolean takeInto(long[] into) {
            long s = sent.sumThenReset();
            long h = handled.sumThenReset();
            long f = failed.sumThenReset();
            long d = dead.sumThenReset();
            long t = trimmed.sumThenReset();
            long x = expired.sumThenReset();
            into[RmqRedisHistory.SENT] += s;
            into[RmqRedisHistory.HANDLED] += h;
            into[RmqRedisHistory.FAILED] += f;
            into[RmqRedisHistory.DEAD] += d;
            into[RmqRedisHistory.TRIMMED] += t;
            into[RmqRedisHistory.EXPIRED] += x;
            return (s | h | f | d | t | x) != 0;
        }
    }
}
