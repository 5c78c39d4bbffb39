package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

import io.rmq.core.internal.RmqKeys;
import io.rmq.core.internal.SlotRouter;
import io.rmq.core.TopicType;
import io.rmq.test.RedisTopology;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

@ParameterizedClass
@EnumSource(RedisTopology.class)
class KeyLayoutTest extends EngineTestSupport {

    KeyLayoutTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void keysFollowTheDocumentedLayoutAndShareOneClusterSlot() {
        RmqKeys keys = new RmqKeys("rmq");
        var slot = keys.slot("orders", 5);
        assertThat(new String(slot.store(), StandardCharsets.UTF_8)).isEqualTo("rmq:{orders:5}:store");
        assertThat(new String(slot.prepare(), StandardCharsets.UTF_8)).isEqualTo("rmq:{orders:5}:prepare");
        assertThat(new String(slot.dead(), StandardCharsets.UTF_8)).isEqualTo("rmq:{orders:5}:dead");
        assertThat(new String(slot.context(), StandardCharsets.UTF_8)).isEqualTo("rmq:{orders:5}:context");
        assertThat(new String(slot.errors(), StandardCharsets.UTF_8)).isEqualTo("rmq:{orders:5}:errors");
        assertThat(new String(slot.expiry(), StandardCharsets.UTF_8)).isEqualTo("rmq:{orders:5}:expiry");
        assertThat(new String(slot.dedupe(), StandardCharsets.UTF_8)).isEqualTo("rmq:{orders:5}:dedupe");
        assertThat(slot.all().length).as("the slot keys every slot script gets").isEqualTo(15);
        assertThat(new String(slot.leaseSeq(), StandardCharsets.UTF_8)).isEqualTo("rmq:{orders:5}:lease-seq");
        assertThat(new String(slot.skipped(), StandardCharsets.UTF_8)).isEqualTo("rmq:{orders:5}:skipped");
        assertThat(new String(keys.topics(), StandardCharsets.UTF_8)).isEqualTo("rmq:topics");
        for (byte[] key : slot.leasing()) {
            assertThat(SlotHash.getSlot(key)).isEqualTo(SlotHash.getSlot(slot.store()));
        }
    }

    @Test
    void slotIsCrc32OfTheBasisMaskedBySlotAmount() {
        byte[] body = "{\"id\":123}".getBytes(StandardCharsets.UTF_8);
        CRC32 crc = new CRC32();
        crc.update(body);
        assertThat(SlotRouter.slot(body, 16)).isEqualTo((int) (crc.getValue() & 15));
        assertThat(SlotRouter.slot(body, 1)).isZero();

        rmq.defineTopic("t", TopicType.PRIORITY, 16);
        var result = rmq.producer().send(io.rmq.producer.OutgoingMessage.priority("t", "{\"id\":123}", 1));
        assertThat(result.slot()).isEqualTo((int) (crc.getValue() & 15));
        var viaBasis = rmq.producer().send(io.rmq.producer.OutgoingMessage.priority("t", "other", 1).withSlotBasis("{\"id\":123}"));
        assertThat(viaBasis.slot()).isEqualTo(result.slot());
        assertThat(client).isInstanceOfAny(RedisClient.class, RedisClusterClient.class);
    }
}
