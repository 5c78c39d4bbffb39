package io.rmq.micrometer.observation;

import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The sender's sampling decision as each propagation format writes it, and what counts when there is none. */
class TraceSamplingTest {

    private static final String TRACE = "0af7651916cd43dd8448eb211c80319c";
    private static final String SPAN = "b7ad6b7169203331";

    @Test
    void theTraceparentsSampledFlagDecides() {
        assertThat(TraceSampling.sampled(Map.of("traceparent", "00-" + TRACE + "-" + SPAN + "-01"))).isTrue();
        assertThat(TraceSampling.sampled(Map.of("traceparent", "00-" + TRACE + "-" + SPAN + "-00"))).isFalse();
        // the sampled bit among other flags, and a later version's appended field
        assertThat(TraceSampling.sampled(Map.of("traceparent", "00-" + TRACE + "-" + SPAN + "-03"))).isTrue();
        assertThat(TraceSampling.sampled(Map.of("traceparent", "00-" + TRACE + "-" + SPAN + "-02"))).isFalse();
        assertThat(TraceSampling.sampled(Map.of("traceparent", "01-" + TRACE + "-" + SPAN + "-00-what"))).isFalse();
        // with tracestate and baggage beside it, the decision is the traceparent's
        Map<String, String> full = new LinkedHashMap<>();
        full.put("tracestate", "congo=t61rcWkgMzE");
        full.put("baggage", "tenant=acme");
        full.put("traceparent", "00-" + TRACE + "-" + SPAN + "-00");
        assertThat(TraceSampling.sampled(full)).isFalse();
    }

    @Test
    void theB3SamplingStateDecides() {
        assertThat(TraceSampling.sampled(Map.of("b3", TRACE + "-" + SPAN + "-1"))).isTrue();
        assertThat(TraceSampling.sampled(Map.of("b3", TRACE + "-" + SPAN + "-d"))).as("debug").isTrue();
        assertThat(TraceSampling.sampled(Map.of("b3", TRACE + "-" + SPAN + "-0"))).isFalse();
        assertThat(TraceSampling.sampled(Map.of("b3", TRACE + "-" + SPAN + "-0-" + SPAN))).isFalse();
        assertThat(TraceSampling.sampled(Map.of("b3", "0"))).isFalse();
        assertThat(TraceSampling.sampled(Map.of("X-B3-TraceId", TRACE, "X-B3-SpanId", SPAN, "X-B3-Sampled", "0")))
                .isFalse();
        assertThat(TraceSampling.sampled(Map.of("X-B3-TraceId", TRACE, "X-B3-SpanId", SPAN, "X-B3-Sampled", "1")))
                .isTrue();
        assertThat(TraceSampling.sampled(Map.of("x-b3-sampled", "false"))).as("any case, true/false").isFalse();
        assertThat(TraceSampling.sampled(Map.of("X-B3-Flags", "1", "X-B3-Sampled", "0"))).as("debug").isTrue();
    }

    @Test
    void aSampledFlagInAnyFormatWins() {
        assertThat(TraceSampling.sampled(Map.of("traceparent", "00-" + TRACE + "-" + SPAN + "-00",
                "b3", TRACE + "-" + SPAN + "-1"))).isTrue();
    }

    @Test
    void aCarrierWithoutADecisionIsStored() {
        assertThat(TraceSampling.sampled(Map.of())).isTrue();
        assertThat(TraceSampling.sampled(Map.of("b3", TRACE + "-" + SPAN))).as("deferred").isTrue();
        assertThat(TraceSampling.sampled(Map.of("X-B3-TraceId", TRACE, "X-B3-SpanId", SPAN))).as("deferred").isTrue();
        assertThat(TraceSampling.sampled(Map.of("uber-trace-id", TRACE + ":" + SPAN + ":0:0"))).as("unknown format")
                .isTrue();
        assertThat(TraceSampling.sampled(Map.of("traceparent", "00-abc-def-00"))).as("malformed").isTrue();
        assertThat(TraceSampling.sampled(Map.of("traceparent", "00-" + TRACE + "-" + SPAN + "-0x"))).as("malformed")
                .isTrue();
    }
}
