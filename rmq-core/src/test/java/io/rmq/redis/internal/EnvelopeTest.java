package io.rmq.redis.internal;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The envelope's stored form: round trips, the compact traceparent, and damaged or newer values refused. */
class EnvelopeTest {

    private static final String TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    @Test
    void nothingToStoreIsNull() {
        assertThat(Envelope.encode(null, Map.of())).isNull();
    }

    @Test
    void payloadAndHeadersRoundTripInOrder() {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("tenant", "acme");
        headers.put("type", "OrderPlaced");
        headers.put("ünïcode", "✓ ok");
        headers.put("empty", "");
        byte[] payload = "{\"price\":3}".getBytes(StandardCharsets.UTF_8);
        Envelope decoded = Envelope.decode(Envelope.encode(payload, headers));
        assertThat(decoded.payload()).isEqualTo(payload);
        assertThat(decoded.headers()).containsExactlyEntriesOf(headers);
    }

    @Test
    void headersAreStoredAsTheLayoutSaysByteForByte() {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("a", "é");
        headers.put("traceparent", TRACEPARENT);
        headers.put("bc", "");
        byte[] stored = Envelope.encode(new byte[] {9, 8}, headers);
        byte[] trace = new byte[25];
        System.arraycopy(Envelope.encode(null, Map.of("traceparent", TRACEPARENT)), 1, trace, 0, 25);
        // flags 1|2|4, payload length 2 and bytes, the 25 trace bytes, 2 headers: "a" = C3 A9, "bc" = ""
        byte[] expected = new byte[1 + 1 + 2 + 25 + 1 + (1 + 1 + 1 + 2) + (1 + 2 + 1)];
        int at = 0;
        expected[at++] = 7;
        expected[at++] = 2;
        expected[at++] = 9;
        expected[at++] = 8;
        System.arraycopy(trace, 0, expected, at, 25);
        at += 25;
        for (int b : new int[] {2, 1, 'a', 2, 0xC3, 0xA9, 2, 'b', 'c', 0}) {
            expected[at++] = (byte) b;
        }
        assertThat(stored).isEqualTo(expected);
    }

    @Test
    void aVersion00TraceparentIsStoredIn25BytesAndComesBackAsText() {
        byte[] stored = Envelope.encode(null, Map.of("traceparent", TRACEPARENT));
        assertThat(stored).hasSize(1 + 25);
        assertThat(Envelope.decode(stored).headers()).isEqualTo(Map.of("traceparent", TRACEPARENT));
        assertThat(Envelope.decode(stored).payload()).isNull();
        // anything else travels as text, exactly as given
        for (String other : new String[] {TRACEPARENT.toUpperCase(), "01" + TRACEPARENT.substring(2), "00-abc",
                TRACEPARENT.replace('-', '_')}) {
            assertThat(Envelope.decode(Envelope.encode(null, Map.of("traceparent", other))).headers())
                    .isEqualTo(Map.of("traceparent", other));
        }
    }

    @Test
    void aPayloadAloneIsItsFlagItsLengthAndItselfAtEveryLengthPrefixSize() {
        for (int length : new int[] {1, 127, 128, 16_383, 16_384, 300_000}) {
            byte[] payload = new byte[length];
            java.util.Arrays.fill(payload, (byte) 'x');
            byte[] stored = Envelope.encode(payload, Map.of());
            int prefix = length < 128 ? 1 : length < 16_384 ? 2 : 3;
            assertThat(stored).as("%d bytes", length).hasSize(1 + prefix + length);
            assertThat(stored[0]).isEqualTo((byte) 1);
            assertThat(stored[prefix]).as("the last length byte has no continuation bit").isNotNegative();
            assertThat(Envelope.decode(stored).payload()).isEqualTo(payload);
            assertThat(Envelope.decode(stored).headers()).isEmpty();
        }
    }

    @Test
    void anEnvelopeNeverLooksLikeALegacyContextText() {
        assertThat(Envelope.isEnvelope(Envelope.encode(new byte[] {1}, Map.of()))).isTrue();
        assertThat(Envelope.isEnvelope(TRACEPARENT.getBytes(StandardCharsets.UTF_8))).isFalse();
        assertThat(Envelope.isEnvelope("tracestate=x".getBytes(StandardCharsets.UTF_8))).isFalse();
        assertThat(Envelope.isEnvelope(new byte[0])).isFalse();
        assertThat(Envelope.isEnvelope(null)).isFalse();
    }

    @Test
    void unknownFlagsAndDamagedValuesAreRefusedNamingWhy() {
        assertThatThrownBy(() -> Envelope.decode(new byte[] {8})).hasMessageContaining("flags 8 unknown");
        byte[] stored = Envelope.encode("abc".getBytes(StandardCharsets.UTF_8), Map.of("k", "v"));
        for (int cut = 0; cut < stored.length; cut++) {
            byte[] shorter = java.util.Arrays.copyOf(stored, cut);
            assertThatThrownBy(() -> Envelope.decode(shorter)).isInstanceOf(IllegalArgumentException.class);
        }
        byte[] longer = java.util.Arrays.copyOf(stored, stored.length + 1);
        assertThatThrownBy(() -> Envelope.decode(longer)).hasMessageContaining("after its end");
    }

    @Test
    void randomEnvelopesRoundTrip() {
        Random random = new Random(30);
        for (int i = 0; i < 2_000; i++) {
            byte[] payload = random.nextBoolean() ? null : bytes(random, random.nextInt(300));
            Map<String, String> headers = new LinkedHashMap<>();
            int count = random.nextInt(6);
            for (int h = 0; h < count; h++) {
                headers.put(text(random, 1 + random.nextInt(20)), text(random, random.nextInt(200)));
            }
            if (random.nextInt(3) == 0) {
                headers.put("traceparent", TRACEPARENT);
            }
            byte[] stored = Envelope.encode(payload, headers);
            if (payload == null && headers.isEmpty()) {
                assertThat(stored).isNull();
                continue;
            }
            Envelope decoded = Envelope.decode(stored);
            assertThat(decoded.payload()).isEqualTo(payload);
            assertThat(decoded.headers()).isEqualTo(headers);
        }
    }

    private static byte[] bytes(Random random, int length) {
        byte[] out = new byte[length];
        random.nextBytes(out);
        return out;
    }

    private static String text(Random random, int length) {
        StringBuilder out = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            out.append(random.nextInt(4) == 0 ? (char) (0x400 + random.nextInt(200)) : (char) (' ' + random.nextInt(90)));
        }
        return out.toString();
    }
}
