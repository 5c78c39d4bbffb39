package io.rmq.engine;

import java.nio.charset.StandardCharsets;

import io.rmq.redis.internal.EnvelopeKeys;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A grouped body's member (0xFE, the group's UTF-8 length as a uvarint, the group, the body) gives back its group and
 * body, whatever the group's length; a damaged one gives no group and itself as the body; other members pass as they
 * are. The ORDERLY scripts read the same layout (orderly_lane in _orderly.lua; GroupStorageTest runs them).
 */
class GroupedMemberTest {

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void groupAndBodyComeBackWhateverTheGroupsLength() {
        for (String group : new String[] {"g", "acct-ü", "x".repeat(127), "y".repeat(128), "z".repeat(20_000)}) {
            byte[] member = EnvelopeKeys.groupedMember(group, utf8("{\"amount\":5}"));
            int length = utf8(group).length;
            int prefix = length < 128 ? 2 : length < 16_384 ? 3 : 4;
            assertThat(member).hasSize(prefix + length + 12);
            assertThat(member[0]).isEqualTo((byte) 0xFE);
            assertThat(EnvelopeKeys.isGroupedMember(member)).isTrue();
            assertThat(EnvelopeKeys.groupOf(member)).isEqualTo(group);
            assertThat(new String(EnvelopeKeys.bodyOf(member), StandardCharsets.UTF_8)).isEqualTo("{\"amount\":5}");
        }
        assertThat(EnvelopeKeys.groupedMember("y".repeat(128), utf8("b"))).startsWith(0xFE - 256, 0x80, 0x01);
    }

    @Test
    void damagedGroupedMembersAndOtherMembersPassAsTheyAre() {
        byte[][] damaged = {{(byte) 0xFE}, {(byte) 0xFE, 5, 'a', 'b'}, {(byte) 0xFE, (byte) 0x80}};
        for (byte[] member : damaged) {
            assertThat(EnvelopeKeys.groupOf(member)).isNull();
            assertThat(EnvelopeKeys.bodyOf(member)).isSameAs(member);
        }
        byte[] body = utf8("plain");
        assertThat(EnvelopeKeys.groupOf(body)).isNull();
        assertThat(EnvelopeKeys.bodyOf(body)).isSameAs(body);
        byte[] id = EnvelopeKeys.idMember("order-1");
        assertThat(EnvelopeKeys.groupOf(id)).isNull();
        assertThat(EnvelopeKeys.isGroupedMember(id)).isFalse();
        // an empty group's member still parses (groups are never empty: OutgoingMessage refuses them)
        assertThat(EnvelopeKeys.groupOf(new byte[] {(byte) 0xFE, 0, 'b'})).isEmpty();
    }
}
