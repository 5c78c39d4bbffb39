package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import io.rmq.core.TopicType;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.internal.Envelope;
import io.rmq.redis.internal.EnvelopeKeys;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rmq.internal.RmqInternals.redis;
import static io.rmq.internal.RmqInternals.redisAdmin;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The envelope key is computed twice, in Java (EnvelopeKeys) and in Lua (envelope_key in _common.lua): send.lua writes
 * under the Lua key, tools and tests read under the Java one. Both must agree on every member: text, binary, ids.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class EnvelopeKeysTest extends EngineTestSupport {

    EnvelopeKeysTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void luaAndJavaGiveEveryMemberTheSameEnvelopeKey() {
        rmq.defineTopic("t", TopicType.FIXED_TIME, 1);
        SlotKeys slot = redis(rmq).keys().slot("t", 0);
        Random random = new Random(42);
        List<OutgoingMessage> batch = new ArrayList<>();
        List<byte[]> members = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            Object body;
            byte[] member;
            OutgoingMessage message;
            switch (i % 3) {
                case 0 -> {
                    byte[] bytes = new byte[1 + random.nextInt(200)];
                    random.nextBytes(bytes);
                    bytes[0] = (byte) (bytes[0] & 0x7F); // 0xFF first is the id tag, refused for bodies
                    body = bytes;
                    member = bytes;
                    message = OutgoingMessage.fixedTime("t", body, Instant.now()).withHeader("i", "" + i);
                }
                case 1 -> {
                    String text = "body-" + i + "-" + "é✓".repeat(random.nextInt(30));
                    member = text.getBytes(StandardCharsets.UTF_8);
                    message = OutgoingMessage.fixedTime("t", text, Instant.now()).withHeader("i", "" + i);
                }
                default -> {
                    String id = "id-" + i + "-" + "ü".repeat(random.nextInt(10));
                    member = EnvelopeKeys.idMember(id);
                    message = OutgoingMessage.fixedTime("t", "p" + i, Instant.now()).withId(id).withHeader("i", "" + i);
                }
            }
            batch.add(message);
            members.add(member);
        }
        rmq.producer().sendBatch(batch);
        assertThat(redisAdmin(rmq).storedEnvelopes(slot).join()).isEqualTo(500);
        for (int i = 0; i < members.size(); i++) {
            byte[] stored = redisAdmin(rmq).storedEnvelope(slot, members.get(i)).join();
            assertThat(stored).as("member %d", i).isNotNull();
            assertThat(Envelope.decode(stored).headers()).containsEntry("i", "" + i);
        }
        assertThat(EnvelopeKeys.of(members.get(0))).hasSize(14).startsWith(1);
        assertThat(EnvelopeKeys.of(members.get(2))).isEqualTo(members.get(2));
    }
}
