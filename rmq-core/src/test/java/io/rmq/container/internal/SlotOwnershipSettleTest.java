package io.rmq.container.internal;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.consumer.internal.SlotClaims;
import io.rmq.core.RmqTimeoutException;
import io.rmq.core.TopicType;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.redis.internal.RmqRedis;
import io.rmq.redis.internal.MembersBeat;
import io.rmq.redis.internal.RmqRedisOrderly.Claim;
import io.rmq.redis.internal.RmqRedis.MembersAction;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rmq.internal.RmqInternals.redis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The end of an ownership pass ({@link SlotOwnership#settle}): every release and claim answer is read on its own, so
 * a release without an answer no longer hides a claim Redis granted (a leased owner key of a live holder is never
 * taken over by time: such a slot stayed unserved for the life of the instance). A granted claim is owned; one whose
 * answer comes too late is orphaned (a later pass releases it); the failure is thrown once all were read.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class SlotOwnershipSettleTest extends ContainerTestSupport {

    private static final long COMMAND_TIMEOUT_MILLIS = 500;

    SlotOwnershipSettleTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void aReleaseWithoutAnAnswerHidesNoClaimAndALateClaimIsOrphaned() {
        String topic = "settle";
        engine(RmqInstrumentation.NONE).defineTopic(topic, TopicType.FIXED_TIME, 4);
        SlotConsumer consumer = (SlotConsumer) engine.consumer(topic, ORDERLY_FAST);
        OrderlySlots slots = new OrderlySlots("settle", topic);
        OwnershipChanges changes = new OwnershipChanges(slots);
        StepBook steps = new StepBook(slots, new OrderlyPauseGate(slots));
        SlotOwnership ownership = new SlotOwnership(consumer, engine.slotCoordinator(), slots, changes, steps,
                new SlotStepSender(consumer, steps, changes, new RedisClock(), "settle", COMMAND_TIMEOUT_MILLIS),
                orderlyOptions("settle", Duration.ofSeconds(1), Thread::new), COMMAND_TIMEOUT_MILLIS);
        ownership.newInstanceId();
        String me = ownership.instanceId();
        RmqRedis redis = redis(engine);
        MembersBeat live = redis.members(topic, me, 60_000, MembersAction.JOIN).join();

        Map<Integer, CompletableFuture<Boolean>> releases = new LinkedHashMap<>();
        releases.put(3, CompletableFuture.failedFuture(new RmqTimeoutException("no answer releasing slot 3")));
        Map<Integer, CompletableFuture<Claim>> claims = new LinkedHashMap<>();
        claims.put(0, SlotClaims.claimLeased(consumer, 0, me, 0, live));
        // granted by Redis, its answer read after the pass's bound
        var late = Executors.newSingleThreadScheduledExecutor();
        try {
            CompletableFuture<Claim> lateClaim = new CompletableFuture<>();
            SlotClaims.claimLeased(consumer, 1, me, 0, live).thenAccept(c -> late.schedule(
                    () -> lateClaim.complete(c), 4 * COMMAND_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS));
            claims.put(1, lateClaim);

            assertThatThrownBy(() -> ownership.settle(releases, claims, Long.MAX_VALUE))
                    .isInstanceOf(RmqTimeoutException.class).hasMessageContaining("releasing slot 3");
            assertThat(slots.ownedSlots()).as("the granted claim read despite the failed release").containsExactly(0);
            assertThat(ownership.orphanedSlots()).as("the claim whose answer came too late").containsExactly(1);
            // Redis did grant it: without the orphan mark nobody would ever release it while this instance is listed
            Claim other = SlotClaims.claimLeased(consumer, 1, "other", 0,
                    redis.members(topic, "other", 60_000, MembersAction.JOIN).join()).join();
            assertThat(other.held()).as("slot 1 is this instance's in Redis").isFalse();
        }
        finally {
            late.shutdownNow();
        }
    }
}
