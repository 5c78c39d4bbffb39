package io.rmq.spring.transactions;

// The failure handler of docs/transactions.md, imports included: a metric beside the default ERROR line; compiled so
// it cannot rot
// tag::transactions-failure-handler[]
import io.micrometer.core.instrument.MeterRegistry;
import io.rmq.spring.RmqSendFailureHandler;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration(proxyBeanMethods = false)
class OrderPlacementFailures {

    @Bean
    RmqSendFailureHandler countingSendFailures(MeterRegistry meters) {
        RmqSendFailureHandler logging = RmqSendFailureHandler.logging();
        return (message, error) -> {
            logging.sendFailed(message, error); // keep the default ERROR line (topic and id)
            meters.counter("orders.lost.sends", "topic", message.topic()).increment();
        };
    }
}
// end::transactions-failure-handler[]
