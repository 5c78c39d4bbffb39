package io.rmq.guide;

// tag::container-customizers[]
import java.time.Duration;

import io.rmq.core.ConsumeMode;
import io.rmq.spring.listener.RmqListenerContainerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

@Configuration
public class ListenerCustomizers {

    /** Every listener's container: ORDERLY ones hand a dead instance's slots over sooner. */
    @Bean
    @Order(1)
    RmqListenerContainerCustomizer quickTakeOver() {
        return container -> {
            if (container.options().mode() == ConsumeMode.ORDERLY) {
                container.options(container.options().withOwnershipTimeout(Duration.ofSeconds(2)));
            }
        };
    }

    /** One listener's container, by its id: small pops, so little waits in its buffer. */
    @Bean
    @Order(2)
    RmqListenerContainerCustomizer smallOrderTimeoutBatches() {
        return RmqListenerContainerCustomizer.forListener("orderTimeouts.close",
                container -> container.settings(container.settings().withBatchSize(8)));
    }
}
// end::container-customizers[]
