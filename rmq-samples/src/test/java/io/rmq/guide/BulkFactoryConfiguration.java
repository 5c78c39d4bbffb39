package io.rmq.guide;

// The listener guide's second container factory, started from the auto-configured one; compiled so it cannot rot
// tag::bulk-factory[]
import java.util.List;

import io.rmq.spring.listener.RmqListenerContainerFactory;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration
public class BulkFactoryConfiguration {

    @Bean
    RmqListenerContainerFactory bulkFactory(
            @Qualifier("rmqListenerContainerFactory") RmqListenerContainerFactory standard) {
        RmqListenerContainerFactory bulk = standard.withDefaultConcurrency(8);
        bulk.setContainerCustomizers(List.of(container -> container.settings(container.settings().withBatchSize(256))));
        return bulk;
    }
}
// end::bulk-factory[]
