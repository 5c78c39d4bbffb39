package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.LongPredicate;
import java.util.stream.Stream;

import io.rmq.admin.MessageRef;
import io.rmq.admin.MessageStatus;
import io.rmq.admin.WaitingMessage;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.RmqConsumer;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.internal.WakeUpSubscriber;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static io.rmq.internal.RmqInternals.redis;
import static io.rmq.internal.RmqInternals.redisAdmin;
import static io.rmq.internal.RmqInternals.wakeUps;

/**
 * The merge-and-wake rule is written four times, once per write path; this table holds them to one behaviour, as
 * {@code find} and {@code browse} show it. Rows: write path × topic type × where the body's existing copy is (waiting
 * in store, in flight in prepare, dead) × the new send's value against the existing copy's (taken sooner, later, the
 * same). The paths, and which sends take them:
 * <ul>
 * <li>{@link Path#LONE}: a single send without an envelope (or with a body's trace context alone) into a slot whose
 * previous lone send was first ({@code send}, {@code sendAsync}): one call of send_one.lua: {@code ZADD}, the rank
 * check and a {@code PUBLISH} when the message is first (SendWrites.sendOne);</li>
 * <li>{@link Path#BACKLOGGED}: the same send into a slot whose previous lone send was not first: the native
 * {@code ZADD} and its rank check written together, the announcement published from the client
 * (SendWrites.sendTogether; RANGE_MERGE due at the client's estimate of Redis's clock). Which way a lone send goes
 * depends on what earlier sends found, so the row takes this one on purpose ({@code RmqRedis.sendBacklogged});</li>
 * <li>{@link Path#SCRIPT}: send.lua, which single sends coalesced while their slot is busy and every send whose
 * envelope holds more than a body's trace context (here: a header) go through;</li>
 * <li>{@link Path#BATCH}: {@code sendBatch} without trace contexts: a multi-member {@code ZADD} and a read of the
 * slot's first message (SendWrites.sendBatch).</li>
 * </ul>
 * The documented behaviour (README "Message types", "A duplicate sent while the body is in flight", "Dead queue"): a
 * duplicate of a waiting message merges (RANGE_MERGE keeps its due time, PRIORITY and FIXED_TIME take the latest
 * value); beside a copy in flight the send waits as a copy of its own and leaves the delivery's lease alone; beside a
 * dead copy it starts fresh and the dead copy stays. A send that leaves the slot's first message due sooner than the
 * slot's previous first (or fills an empty store) wakes sleeping consumers; the paths may announce more than that
 * (an announcement costs a sleeper one poll), which this table does not pin.
 * <p>
 * One topic of one slot per row, so rows never see each other's messages or announcements.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class MergeRuleTest extends EngineTestSupport {

    MergeRuleTest(RedisTopology topology) {
        super(topology);
    }

    enum Path { LONE, BACKLOGGED, SCRIPT, BATCH }

    enum Existing { WAITING, IN_FLIGHT, DEAD }

    /** The new send's value against the existing copy's, in taking order (PRIORITY: sooner = higher). */
    enum Relation { SOONER, LATER, SAME }

    private static final String BODY = "sku-42";
    private static final byte[] MEMBER = BODY.getBytes(StandardCharsets.UTF_8);
    /** The existing copy's time range (RANGE_MERGE) or priority; a FIXED_TIME copy is due a minute ago. */
    private static final long RANGE = 60_000;
    private static final long PRIORITY = 10;
    /** How far the new send's value lies from the existing copy's: 30 s, or 5 priority steps. */
    private static final long TIME_STEP = 30_000;
    private static final long PRIORITY_STEP = 5;
    /** Long enough that no lease of a setup delivery runs out during its row. */
    private static final Duration LEASE = Duration.ofMinutes(2);

    private int rows;

    @TestFactory
    Stream<DynamicTest> everyWritePathMergesWakesAndLeavesOtherCopiesAlikeForEveryTypeAndState() {
        List<DynamicTest> tests = new ArrayList<>();
        for (Path path : Path.values()) {
            for (TopicType type : TopicType.values()) {
                for (Existing existing : Existing.values()) {
                    for (Relation relation : Relation.values()) {
                        String name = path + " " + type + ", existing copy " + existing + ", new send " + relation;
                        tests.add(DynamicTest.dynamicTest(name, () -> {
                            try {
                                row(path, type, existing, relation);
                            }
                            catch (AssertionError ex) {
                                // surefire names a dynamic test by its index only
                                throw new AssertionError(name + " (" + topology + "): " + ex.getMessage(), ex);
                            }
                        }));
                    }
                }
            }
        }
        return tests.stream();
    }

    private void row(Path path, TopicType type, Existing existing, Relation relation) throws Exception {
        String topic = "merge-" + rows++;
        rmq.defineTopic(topic, type, 1);
        SlotKeys slot = redis(rmq).keys().slot(topic, 0);
        BlockingQueue<Long> heard = new LinkedBlockingQueue<>();
        WakeUpSubscriber.Listener listener = (s, due) -> heard.add(due);
        wakeUps(rmq).register(topic, listener);
        try {
            long setupStarted = System.currentTimeMillis();
            // ---- the existing copy, made by a plain send (and a pop, and a burial)
            long fixedTime = System.currentTimeMillis() - 60_000; // due: a pop can take it at once
            OutgoingMessage first = switch (type) {
                case RANGE_MERGE -> OutgoingMessage.rangeMerge(topic, BODY, Duration.ofMillis(RANGE));
                case PRIORITY -> OutgoingMessage.priority(topic, BODY, PRIORITY);
                case FIXED_TIME -> OutgoingMessage.fixedTime(topic, BODY, Instant.ofEpochMilli(fixedTime));
            };
            assertThat(rmq.producer().send(first).merged()).isFalse();
            double firstScore = rmq.admin().find(MessageRef.body(topic, BODY)).waitingScore();
            // its announcement (heard before anything else happens, so that it cannot be taken for the new send's)
            awaitWake(heard, type == TopicType.PRIORITY ? due -> true : due -> due == (long) firstScore, "the setup send");
            Double lease = null;
            MessageStatus buried = null;
            if (existing != Existing.WAITING) {
                if (type == TopicType.RANGE_MERGE) {
                    // due in a minute: made due now, so that a pop takes it
                    Instant now = Instant.ofEpochMilli((long) firstScore - RANGE);
                    rmq.admin().reschedule(MessageRef.body(topic, BODY), now);
                    awaitWake(heard, due -> due == now.toEpochMilli(), "the setup's reschedule");
                }
                RmqConsumer consumer = rmq.consumer(topic, FAST.withLease(LEASE));
                Delivery delivery = popOne(consumer);
                lease = redisAdmin(rmq).prepareScore(slot, MEMBER).join();
                assertThat(lease).isNotNull();
                if (existing == Existing.DEAD) {
                    consumer.deadLetter(delivery, "buried by the test");
                    buried = rmq.admin().find(MessageRef.body(topic, BODY));
                    assertThat(buried.isDead()).isTrue();
                    assertThat(buried.exists()).isTrue();
                    assertThat(buried.isPending()).isFalse();
                }
            }
            heard.clear();

            // ---- the new send
            long parameter = switch (type) {
                case RANGE_MERGE -> RANGE + switch (relation) {
                    case SOONER -> -TIME_STEP;
                    case LATER -> TIME_STEP;
                    case SAME -> 0;
                };
                case FIXED_TIME -> fixedTime + switch (relation) {
                    case SOONER -> -TIME_STEP;
                    case LATER -> TIME_STEP;
                    case SAME -> 0;
                };
                case PRIORITY -> PRIORITY + switch (relation) {
                    case SOONER -> PRIORITY_STEP;
                    case LATER -> -PRIORITY_STEP;
                    case SAME -> 0;
                };
            };
            boolean merged = send(path, type, topic, slot, parameter);
            long sentBy = System.currentTimeMillis();

            // ---- what find and browse show
            MessageStatus status = rmq.admin().find(MessageRef.body(topic, BODY));
            assertThat(merged).as("merged").isEqualTo(existing == Existing.WAITING);
            assertThat(status.waitingScore()).as("waiting score").isNotNull();
            double score = status.waitingScore();
            if (type == TopicType.RANGE_MERGE) {
                if (existing == Existing.WAITING) {
                    assertThat(score).as("a waiting RANGE_MERGE copy keeps its due time").isEqualTo(firstScore);
                }
                else {
                    // a copy of its own, due its own time range after the send: Redis's now at the setup send was
                    // firstScore - RANGE; the send came later, by at most the local time since (plus the error of
                    // the estimate of Redis's clock the native paths use)
                    double setupNow = firstScore - RANGE;
                    assertThat(score).as("due time of the new copy").isBetween(setupNow + parameter - 1_000,
                            setupNow + parameter + (sentBy - setupStarted) + 1_000);
                }
            }
            else {
                assertThat(score).as("PRIORITY and FIXED_TIME take the latest value").isEqualTo((double) parameter);
            }
            assertThat(status.failedAttempts()).as("failed attempts of the live copy").isZero();
            assertThat(status.isRetrying()).isFalse();
            assertThat(status.inFlight()).as("in flight").isEqualTo(existing == Existing.IN_FLIGHT);
            assertThat(status.isDead()).as("dead").isEqualTo(existing == Existing.DEAD);
            if (existing == Existing.IN_FLIGHT) {
                assertThat(redisAdmin(rmq).prepareScore(slot, MEMBER).join()).as("the delivery's lease").isEqualTo(lease);
            }
            if (existing == Existing.DEAD) {
                assertThat(status.diedAt()).isEqualTo(buried.diedAt());
                assertThat(status.deadReason()).isEqualTo("buried by the test");
                assertThat(rmq.admin().deadCount(topic)).isEqualTo(1);
            }
            List<WaitingMessage> waiting = rmq.admin().browse(topic, null, 10).messages();
            assertThat(waiting).hasSize(1);
            assertThat(waiting.get(0).bodyAsString()).isEqualTo(BODY);
            assertThat(waiting.get(0).score()).isEqualTo(score);
            assertThat(waiting.get(0).failedAttempts()).isZero();

            // ---- the wake-up: owed when the store was empty, or when the slot's first message became due sooner
            boolean owed = existing != Existing.WAITING
                    || (type == TopicType.FIXED_TIME && relation == Relation.SOONER);
            if (owed) {
                awaitWake(heard, type == TopicType.PRIORITY ? due -> true : due -> due == (long) score,
                        "the new send");
            }
        }
        finally {
            wakeUps(rmq).unregister(topic, listener);
        }
    }

    /** Sends {@link #BODY} along {@code path}; returns whether it merged into a waiting copy. */
    private boolean send(Path path, TopicType type, String topic, SlotKeys slot, long parameter) {
        OutgoingMessage message = switch (type) {
            case RANGE_MERGE -> OutgoingMessage.rangeMerge(topic, BODY, Duration.ofMillis(parameter));
            case PRIORITY -> OutgoingMessage.priority(topic, BODY, parameter);
            case FIXED_TIME -> OutgoingMessage.fixedTime(topic, BODY, Instant.ofEpochMilli(parameter));
        };
        return switch (path) {
            case LONE -> rmq.producer().send(message).merged();
            case BACKLOGGED -> redis(rmq).sendBacklogged(slot, type == TopicType.RANGE_MERGE,
                    type == TopicType.PRIORITY, MEMBER, parameter).join() == 0;
            // a header makes the envelope more than a trace context: the lone send cannot take send_one.lua
            case SCRIPT -> rmq.producer().send(message.withHeader("row", "script")).merged();
            case BATCH -> rmq.producer().sendBatch(List.of(message)).added() == 0;
        };
    }

    private static Delivery popOne(RmqConsumer consumer) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            List<Delivery> got = consumer.poll().deliveries();
            if (!got.isEmpty()) {
                assertThat(got).hasSize(1);
                return got.get(0);
            }
            Thread.sleep(5);
        }
        return fail("the existing copy was not popped within 30 s");
    }

    /** Waits for an announcement that {@code wanted} accepts (others, e.g. superfluous ones, are skipped). */
    private static void awaitWake(BlockingQueue<Long> heard, LongPredicate wanted, String of)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        List<Long> others = new ArrayList<>();
        while (System.nanoTime() < deadline) {
            Long due = heard.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (due != null && wanted.test(due)) {
                return;
            }
            if (due != null) {
                others.add(due);
            }
        }
        fail("no wake-up announced " + of + " within 30 s (heard only " + others + ")");
    }
}
