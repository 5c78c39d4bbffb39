package io.rmq.core;

import java.nio.charset.StandardCharsets;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.exc.ValueInstantiationException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Canonical encoding and decoding of bodies, including the direct creator calls of {@link DirectCreatorModule}. */
class BodyCodecTest {

    private final BodyCodec codec = new BodyCodec();

    public record Order(long id, String note) {
    }

    /** Records whose compact constructor validates: failures must read as Jackson reports them. */
    public record Positive(int value) {
        public Positive {
            if (value <= 0) {
                throw new IllegalArgumentException("value must be positive, was " + value);
            }
        }
    }

    /** Not public, so the constructor is reached only through an accessible reflective handle. */
    record Hidden(String name, List<Integer> numbers) {
    }

    /** Remembers whether it was built through the direct instantiator. */
    public record Traced(String name, boolean direct) {
        @JsonCreator
        public Traced(@JsonProperty("name") String name) {
            this(name, StackWalker.getInstance().walk(frames -> frames
                    .anyMatch(f -> f.getClassName().endsWith("DirectCreatorModule$DirectInstantiator"))));
        }
    }

    public static final class Pojo {
        final String a;
        final int b;

        @JsonCreator
        public Pojo(@JsonProperty("a") String a, @JsonProperty("b") int b) {
            this.a = a;
            this.b = b;
        }

        public String getA() {
            return a;
        }

        public int getB() {
            return b;
        }
    }

    @Test
    void recordsRoundTripCanonically() {
        byte[] bytes = codec.encode(new Order(7, "x"));
        assertThat(new String(bytes, StandardCharsets.UTF_8)).isEqualTo("{\"id\":7,\"note\":\"x\"}");
        assertThat(codec.<Order>decode(bytes, Order.class)).isEqualTo(new Order(7, "x"));
        assertThat(codec.<Order>decode("{\"note\":null,\"id\":3}".getBytes(StandardCharsets.UTF_8), Order.class))
                .isEqualTo(new Order(3, null));
    }

    @Test
    void aBatchEncoderWritesTheSameBytesAsSingleEncoding() {
        List<Object> bodies = List.of(new Order(1, "a"), "plain text", new Pojo("p", 2), new Order(2, "b"),
                new byte[] { 1, 2, 3 }, java.util.Map.of("z", 1, "a", List.of(2, 3)), new Order(3, null));
        try (BodyCodec.Encoder encoder = codec.encoder()) {
            for (Object body : bodies) {
                assertThat(encoder.encode(body)).as(String.valueOf(body)).isEqualTo(codec.encode(body));
            }
        }
    }

    @Test
    void aBatchEncoderRecoversFromABodyThatCannotBeSerialized() {
        Object unserializable = new Object() {
            public Object getSelf() {
                throw new IllegalStateException("boom");
            }
        };
        try (BodyCodec.Encoder encoder = codec.encoder()) {
            assertThat(encoder.encode(new Order(1, "a"))).isEqualTo(codec.encode(new Order(1, "a")));
            assertThatThrownBy(() -> encoder.encode(unserializable))
                    .isInstanceOf(RmqInvalidArgumentException.class)
                    .hasMessageContaining("body")
                    .hasMessageContaining("must be serializable to JSON");
            assertThat(encoder.encode(new Order(2, "b"))).isEqualTo(codec.encode(new Order(2, "b")));
        }
    }

    /** Serializing it serializes another body on the same thread (e.g. a getter that sends a message). */
    public record Nesting(String name) {
        public String getInner() {
            return new String(CODEC_FOR_NESTING.encode(new Order(9, name)), StandardCharsets.UTF_8);
        }
    }

    static final BodyCodec CODEC_FOR_NESTING = new BodyCodec();

    @Test
    void oneAtATimeEncodingSurvivesFailuresLargeBodiesAndNesting() {
        Object unserializable = new Object() {
            public Object getSelf() {
                throw new IllegalStateException("boom");
            }
        };
        assertThatThrownBy(() -> codec.encode(unserializable)).isInstanceOf(RmqInvalidArgumentException.class);
        assertThat(new String(codec.encode(new Order(1, "a")), StandardCharsets.UTF_8)).isEqualTo("{\"id\":1,\"note\":\"a\"}");

        String large = "x".repeat(200_000);
        assertThat(codec.encode(new Order(2, large))).hasSize(large.length() + "{\"id\":2,\"note\":\"\"}".length());
        assertThat(new String(codec.encode(new Order(3, "c")), StandardCharsets.UTF_8)).isEqualTo("{\"id\":3,\"note\":\"c\"}");

        assertThat(new String(CODEC_FOR_NESTING.encode(new Nesting("n")), StandardCharsets.UTF_8))
                .isEqualTo("{\"inner\":\"{\\\"id\\\":9,\\\"note\\\":\\\"n\\\"}\",\"name\":\"n\"}");
    }

    @Test
    void creatorConstructorsAreCalledDirectly() {
        Traced traced = codec.decode("{\"name\":\"n\"}".getBytes(StandardCharsets.UTF_8), Traced.class);
        assertThat(traced.name()).isEqualTo("n");
        assertThat(traced.direct()).as("built by DirectCreatorModule").isTrue();

        Hidden hidden = codec.decode("{\"name\":\"h\",\"numbers\":[1,2]}".getBytes(StandardCharsets.UTF_8), Hidden.class);
        assertThat(hidden).isEqualTo(new Hidden("h", List.of(1, 2)));

        Pojo pojo = codec.decode("{\"a\":\"q\",\"b\":5}".getBytes(StandardCharsets.UTF_8), Pojo.class);
        assertThat(pojo.getA()).isEqualTo("q");
        assertThat(pojo.getB()).isEqualTo(5);
    }

    /** Counts how often its constructor body ran. */
    public record Counted(int value) {
        static final java.util.concurrent.atomic.AtomicInteger CALLS = new java.util.concurrent.atomic.AtomicInteger();

        public Counted {
            CALLS.incrementAndGet();
            if (value < 0) {
                throw new IllegalArgumentException("negative");
            }
        }
    }

    @Test
    void aThrowingCreatorRunsOnlyOnce() {
        Counted.CALLS.set(0);
        assertThatThrownBy(() -> codec.decode("{\"value\":-1}".getBytes(StandardCharsets.UTF_8), Counted.class))
                .isInstanceOf(ValueInstantiationException.class)
                .hasRootCauseInstanceOf(IllegalArgumentException.class);
        assertThat(Counted.CALLS.get()).as("constructor calls (side effects must not run twice)").isEqualTo(1);
    }

    @Test
    void aThrowingCreatorFailsAsJacksonReportsIt() {
        assertThat(codec.<Positive>decode("{\"value\":2}".getBytes(StandardCharsets.UTF_8), Positive.class))
                .isEqualTo(new Positive(2));
        assertThatThrownBy(() -> codec.decode("{\"value\":-1}".getBytes(StandardCharsets.UTF_8), Positive.class))
                .isInstanceOf(ValueInstantiationException.class)
                .hasMessageContaining("value must be positive, was -1")
                .hasRootCauseInstanceOf(IllegalArgumentException.class);
    }
}
