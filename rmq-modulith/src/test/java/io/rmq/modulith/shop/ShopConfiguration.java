package io.rmq.modulith.shop;

// docs/outbox.md's example, imports included; compiled so it cannot rot
// tag::outbox-headers[]
import java.util.Map;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.modulith.events.EventExternalizationConfiguration;

@Configuration(proxyBeanMethods = false)
public class ShopConfiguration {

    /** Events annotated @Externalized in this package, each OrderPlaced with a "customer" header. */
    @Bean
    EventExternalizationConfiguration eventExternalizationConfiguration() {
        return EventExternalizationConfiguration.defaults("io.rmq.modulith.shop")
                .headers(OrderPlaced.class, event -> Map.of("customer", event.customer()))
                .build();
    }
}
// end::outbox-headers[]
