package io.rmq.guide;

// The operations page's observation convention (docs/operations.md, "Conventions"); compiled so it cannot rot
// tag::process-convention[]
import io.micrometer.common.KeyValues;
import io.rmq.micrometer.observation.RmqProcessContext;
import io.rmq.micrometer.observation.RmqProcessObservationConvention;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration
public class TenantObservations {

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

    /** The tenant is the topic's first dot-separated part, e.g. {@code acme.orders}. */
    static String tenantOf(String topic) {
        int dot = topic.indexOf('.');
        return dot < 0 ? "none" : topic.substring(0, dot);
    }
}
// end::process-convention[]
