package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.internal.Popped;
import io.rmq.redis.internal.RmqRedisLeases;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rmq.internal.RmqInternals.redis;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pop that creates a slot's prepare key with a batch (16 messages or more) makes it a skiplist even for short members (ids, short bodies), which Redis
 * would keep as a listpack, where every insert walks the whole set; the long member that does it is never seen: not
 * by the pop's own reply, not in prepare afterwards, not in the count of deliveries in flight.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class PrepareEncodingTest extends EngineTestSupport {

    PrepareEncodingTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void aPrepareOfShortMembersIsASkiplistHoldingOnlyTheDeliveries() {
        rmq.defineTopic("short", TopicType.FIXED_TIME, 1);
        SlotKeys slot = redis(rmq).keys().slot("short", 0);
        List<OutgoingMessage> messages = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            messages.add(OutgoingMessage.fixedTime("short", "b" + i, java.time.Instant.EPOCH));
            messages.add(OutgoingMessage.fixedTime("short", "{}", java.time.Instant.EPOCH).withId("id-" + i));
        }
        rmq.producer().sendBatch(messages);

        // a batch of 16 or more creates it (a smaller one may leave a listpack: few entries to walk)
        RmqRedisLeases.PopResult first = redis(rmq).leases().pop(slot, false, 20, 30_000, RetryPolicy.DEFAULT).join();
        assertThat(first.messages()).hasSize(20);
        assertThat(encoding(slot)).as("created by the pop as a skiplist").isEqualTo("skiplist");
        long prepared = raw(c -> c.zcard(slot.prepare()));
        assertThat(prepared).as("the deliveries only").isEqualTo(20L);

        RmqRedisLeases.PopResult second = redis(rmq).leases().pop(slot, false, 10, 30_000, RetryPolicy.DEFAULT).join();
        assertThat(encoding(slot)).as("it stays one while it lives").isEqualTo("skiplist");
        List<String> members = new ArrayList<>();
        for (byte[] member : raw(c -> c.zrange(slot.prepare(), 0, -1))) {
            members.add(new String(member, StandardCharsets.ISO_8859_1));
        }
        List<String> delivered = new ArrayList<>();
        for (RmqRedisLeases.PopResult result : List.of(first, second)) {
            for (Popped p : result.messages()) {
                delivered.add(new String(p.member(), StandardCharsets.ISO_8859_1));
            }
        }
        assertThat(members).as("prepare holds exactly the 30 deliveries").hasSize(30)
                .containsExactlyInAnyOrderElementsOf(delivered);
        assertThat(rmq.admin().stats("short").inFlight()).isEqualTo(30);
    }

    private String encoding(SlotKeys slot) {
        return raw(c -> c.objectEncoding(slot.prepare()));
    }
}
