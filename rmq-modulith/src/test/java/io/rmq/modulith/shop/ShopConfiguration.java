package io.rmq.modulith.shop;

import java.util.Map;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.modulith.events.EventExternalizationConfiguration;

@Configuration(proxyBeanMethods = false)
public class ShopConfiguration {

    // tag::outbox-headers[]
    /** Events annotated @Externalized in this package, each OrderPlaced with a "customer" header. */
    @Bean
    EventExternalizationConfiguration eventExternalizationConfiguration() {
        return EventExternalizationConfiguration.defaults("io.rmq.modulith.shop")
                .headers(OrderPlaced.class, event -> Map.of("customer", event.customer()))
                .build();
    }
    // end::outbox-headers[]
}
