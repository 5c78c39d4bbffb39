package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.ScriptOutputType;
import io.rmq.core.TopicType;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.redis.internal.WakeUpSubscriber;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rmq.internal.RmqInternals.redis;
import static io.rmq.internal.RmqInternals.wakeUps;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lone send (one message, one idle slot: {@code send}) is one call of send_one.lua, which reads Redis's clock itself
 * and decides the wake-up in the same call; into a slot whose previous lone send was not first, the native
 * {@code ZADD} and its check written together (IdleCostTest shows which goes when); both decide alike. What that shows from outside: a RANGE_MERGE due time is Redis's now (on
 * the slot's master, read around the send) plus the time range (into a backlogged slot, where the native pair goes,
 * as the client estimates Redis's clock: within a round trip); a slot's new
 * first message is announced once, with its due time, and a send that does not change the slot's first message (a
 * later one, a merge) announces nothing.
 * <p>
 * Announcements are checked in order: each test ends with a marker send that is announced, and since Redis publishes
 * in the order it runs the sends and the subscription delivers in that order, everything announced before the marker
 * has been heard when the marker has.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class LoneSendTest extends EngineTestSupport {

    LoneSendTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void aRangeMergeDueTimeIsRedisNowPlusTheRangeAndAMergeKeepsItAndAnnouncesNothing() throws Exception {
        rmq.defineTopic("rm", TopicType.RANGE_MERGE, 1);
        SlotKeys slot = redis(rmq).keys().slot("rm", 0);
        BlockingQueue<Long> heard = listen("rm");

        long before = redisMillis(slot);
        assertThat(rmq.producer().sendRangeMerge("rm", "a", Duration.ofMinutes(1)).merged()).isFalse();
        long after = redisMillis(slot);
        long due = score(slot, "a");
        assertThat(due).as("due = Redis's now during the send + 60 s").isBetween(before + 60_000, after + 60_000);
        assertThat(next(heard)).as("the first message of an empty slot is announced with its due time").isEqualTo(due);

        assertThat(rmq.producer().sendRangeMerge("rm", "a", Duration.ofMillis(1)).merged()).isTrue();
        assertThat(score(slot, "a")).as("a merged RANGE_MERGE send keeps the waiting copy's due time").isEqualTo(due);
        assertThat(rmq.producer().sendRangeMerge("rm", "b", Duration.ofMinutes(2)).merged()).isFalse();
        rmq.producer().sendRangeMerge("rm", "c", Duration.ofMillis(1)); // due at once: the slot's first, the marker
        long marker = score(slot, "c");

        assertThat(next(heard)).as("the merge and the later message announced nothing; the marker is next")
                .isEqualTo(marker);
        assertThat(heard).isEmpty();
    }

    @Test
    void aFixedTimeSendIsAnnouncedOnlyWhenItIsTheSlotsFirstMessage() throws Exception {
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 1);
        SlotKeys slot = redis(rmq).keys().slot("ft", 0);
        BlockingQueue<Long> heard = listen("ft");
        long now = redisMillis(slot);

        rmq.producer().sendFixedTime("ft", "a", Instant.ofEpochMilli(now + 60_000));
        assertThat(next(heard)).isEqualTo(now + 60_000);
        rmq.producer().sendFixedTime("ft", "b", Instant.ofEpochMilli(now + 120_000));
        rmq.producer().sendFixedTime("ft", "c", Instant.ofEpochMilli(now + 30_000));

        assertThat(next(heard)).as("b (not first) announced nothing; c (first) is announced").isEqualTo(now + 30_000);
        assertThat(score(slot, "b")).isEqualTo(now + 120_000);
        assertThat(heard).isEmpty();
    }

    @Test
    void aPrioritySendIsAnnouncedDueNowOnlyWhenItIsTheHighest() throws Exception {
        rmq.defineTopic("pr", TopicType.PRIORITY, 1);
        SlotKeys slot = redis(rmq).keys().slot("pr", 0);
        BlockingQueue<Long> heard = listen("pr");

        long before = redisMillis(slot);
        rmq.producer().sendPriority("pr", "a", 10);
        long after = redisMillis(slot);
        assertThat(next(heard)).as("due now, on Redis's clock").isBetween(before, after);
        rmq.producer().sendPriority("pr", "b", 5);
        before = redisMillis(slot);
        rmq.producer().sendPriority("pr", "c", 20);
        after = redisMillis(slot);

        // c goes into a slot whose previous lone send (b) was not first: the native way, which dates the announcement
        // by the client's estimate of Redis's clock, or 0 (due for everyone) while it has none for the slot
        assertThat(next(heard)).as("b (lower) announced nothing; c (highest) is announced, due now")
                .isLessThanOrEqualTo(after + 50);
        assertThat(score(slot, "b")).isEqualTo(5);
        assertThat(heard).isEmpty();
    }

    @Test
    void intoABackloggedSlotARangeMergeDueTimeIsTheEstimateOfRedisNowPlusTheRangeAndAFirstMessageIsAnnounced()
            throws Exception {
        rmq.defineTopic("rmb", TopicType.RANGE_MERGE, 1);
        SlotKeys slot = redis(rmq).keys().slot("rmb", 0);
        BlockingQueue<Long> heard = listen("rmb");
        // a batch reads the slot's clock (its due times are estimated), and leaves the slot holding messages
        rmq.producer().sendBatch(List.of(io.rmq.producer.OutgoingMessage.rangeMerge("rmb", "x", Duration.ofHours(1)),
                io.rmq.producer.OutgoingMessage.rangeMerge("rmb", "y", Duration.ofHours(1))));
        assertThat(next(heard)).as("the batch's first message is announced").isEqualTo(score(slot, "x"));
        rmq.producer().sendRangeMerge("rmb", "a", Duration.ofHours(2)); // the script; not first: the slot is backlogged

        long before = redisMillis(slot);
        assertThat(rmq.producer().sendRangeMerge("rmb", "b", Duration.ofMinutes(90)).merged()).isFalse();
        long after = redisMillis(slot);
        // the native way: Redis's now as estimated here (off by up to half a round trip and a millisecond)
        assertThat(score(slot, "b")).as("due = Redis's now (estimated) + 90 min")
                .isBetween(before + 5_400_000 - 50, after + 5_400_000 + 50);
        assertThat(rmq.producer().sendRangeMerge("rmb", "b", Duration.ofMillis(1)).merged()).as("merges as ever")
                .isTrue();
        rmq.producer().sendRangeMerge("rmb", "c", Duration.ofMillis(1)); // the slot's new first: announced
        assertThat(next(heard)).as("a and b announced nothing; c is announced with its due time")
                .isEqualTo(score(slot, "c"));
        assertThat(heard).isEmpty();
    }

    private BlockingQueue<Long> listen(String topic) {
        BlockingQueue<Long> heard = new LinkedBlockingQueue<>();
        WakeUpSubscriber.Listener listener = (s, due) -> heard.add(due);
        wakeUps(rmq).register(topic, listener);
        return heard;
    }

    private static long next(BlockingQueue<Long> heard) throws InterruptedException {
        Long due = heard.poll(30, TimeUnit.SECONDS);
        assertThat(due).as("an announcement within 30 s").isNotNull();
        return due;
    }

    private long score(SlotKeys slot, String body) {
        Double score = raw(c -> c.zscore(slot.store(), body.getBytes(StandardCharsets.UTF_8)));
        assertThat(score).as("%s is waiting", body).isNotNull();
        return score.longValue();
    }

    /** Redis's clock (ms) on the master of the slot, as the scripts read it. */
    private long redisMillis(SlotKeys slot) {
        List<Object> time = new ArrayList<>(raw(c -> c.<List<Object>>eval("return redis.call('TIME')",
                ScriptOutputType.MULTI, slot.store())));
        long seconds = Long.parseLong(new String((byte[]) time.get(0), StandardCharsets.US_ASCII));
        long micros = Long.parseLong(new String((byte[]) time.get(1), StandardCharsets.US_ASCII));
        return seconds * 1000 + micros / 1000;
    }
}
