package io.rmq.redis.internal;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The whole-number fast path of score parsing reads exactly what {@link Double#parseDouble} reads. */
class ScoreParsingTest {

    @ParameterizedTest
    @ValueSource(strings = { "0", "7", "-7", "1795316625967", "999999999999999", "-999999999999999",
            "1234567890123456", "9007199254740993", "1.5", "-0.25", "1e+20", "12a", "-", "" })
    void parsesLikeParseDouble(String printed) {
        byte[] bytes = printed.getBytes(StandardCharsets.UTF_8);
        double expected;
        try {
            expected = Double.parseDouble(printed);
        }
        catch (NumberFormatException ex) {
            assertThatThrownBy(() -> Replies.parseScore(bytes)).isInstanceOf(NumberFormatException.class);
            return;
        }
        assertThat(Replies.parseScore(bytes)).isEqualTo(expected);
    }
}
