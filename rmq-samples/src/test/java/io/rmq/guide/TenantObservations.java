package io.rmq.guide;

import io.micrometer.common.KeyValues;
import io.rmq.micrometer.observation.RmqProcessContext;
import io.rmq.micrometer.observation.RmqProcessObservationConvention;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The operations page's observation convention (docs/operations.md, "Conventions"); compiled so it cannot rot. */
@Configuration
public class TenantObservations {

    // tag::process-convention[]
    @Bean
    RmqProcessObservationConvention tenantAwareProcess() {
        return new RmqProcessObservationConvention() {
            @Override
            public KeyValues getLowCardinalityKeyValues(RmqProcessContext context) {
                return RmqProcessObservationConvention.super.getLowCardinalityKeyValues(context)
                        .and("app.tenant", tenantOf(context.topic()));
            }
        };
    }
    // end::process-convention[]

    /** The tenant is the topic's first dot-separated part, e.g. {@code acme.orders}. */
    static String tenantOf(String topic) {
        int dot = topic.indexOf('.');
        return dot < 0 ? "none" : topic.substring(0, dot);
    }
}
