package io.rmq.core.internal;

import java.nio.charset.StandardCharsets;
import java.util.Random;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The send path's UTF-8 sizes and writes agree with the JDK's encoder byte for byte, lone surrogates included. */
class Utf8Test {

    @Test
    void lengthAndWriteAgreeWithGetBytesForEveryKindOfCharacter() {
        String[] samples = {"", "tenant", "acme-42", "ünïcode", "✓ ok", "日本語", "emoji \uD83D\uDE00 pair",
                "lone high \uD83D end", "lone low \uDE00 end", "\uD83D", "ends high \uD83D", "x\u07FF\u0800\uFFFF"};
        for (String sample : samples) {
            assertSame(sample);
        }
    }

    @Test
    void randomStringsOfAllRangesAgreeWithGetBytes() {
        Random random = new Random(46);
        for (int i = 0; i < 5_000; i++) {
            StringBuilder text = new StringBuilder();
            int length = random.nextInt(40);
            for (int c = 0; c < length; c++) {
                text.append(switch (random.nextInt(5)) {
                    case 0 -> (char) (0x80 + random.nextInt(0x780)); // 2 bytes
                    case 1 -> (char) (0x800 + random.nextInt(0xF7FF)); // 3 bytes, or a surrogate
                    default -> (char) random.nextInt(0x80);
                });
            }
            assertSame(text.toString());
        }
    }

    private static void assertSame(String text) {
        byte[] expected = text.getBytes(StandardCharsets.UTF_8);
        assertThat(Utf8.length(text)).as("length of %s", text).isEqualTo(expected.length);
        byte[] out = new byte[expected.length + 2];
        out[0] = 7;
        assertThat(Utf8.write(text, out, 1)).isEqualTo(1 + expected.length);
        byte[] written = new byte[expected.length];
        System.arraycopy(out, 1, written, 0, expected.length);
        assertThat(written).as("bytes of %s", text).isEqualTo(expected);
        assertThat(out[out.length - 1]).isZero();
    }
}
