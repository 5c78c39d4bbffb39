package io.rmq.benchmarks;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The peer's stand-in for a tracer at a sampling probability: the share of sends that hand RMQ a context to store. */
class TraceparentPerSendTest {

    @AfterEach
    void reset() {
        RmqPeer.sampling = 1;
    }

    private static int storedOf(int sends) {
        RmqPeer.TraceparentPerSend tracer = new RmqPeer.TraceparentPerSend();
        int stored = 0;
        for (int i = 0; i < sends; i++) {
            if (!tracer.sendStarted("t", 1).context().isEmpty()) {
                stored++;
            }
        }
        return stored;
    }

    @Test
    void atFullSamplingEverySendCarriesASampledTraceparent() {
        RmqPeer.TraceparentPerSend tracer = new RmqPeer.TraceparentPerSend();
        assertThat(tracer.sendStarted("t", 1).context().get("traceparent")).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-01");
        assertThat(storedOf(1_000)).isEqualTo(1_000);
    }

    @Test
    void atATenthOnlyAboutOneSendInTenCarriesAContext() {
        RmqPeer.sampling = 0.1;
        // binomial(20,000, 0.1): mean 2,000, standard deviation 42; these bounds are 12 deviations away
        assertThat(storedOf(20_000)).isBetween(1_500, 2_500);
        RmqPeer.sampling = 0;
        assertThat(storedOf(1_000)).isZero();
    }
}
