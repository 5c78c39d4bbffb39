package io.rmq.modulith;

import io.rmq.Rmq;
import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.autoconfigure.RmqProperties;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.ExternalizationMode;
import org.springframework.modulith.events.config.EventExternalizationAutoConfiguration;
import org.springframework.modulith.events.support.EventExternalizationTransport;
import org.springframework.modulith.events.support.EventExternalizerModuleListener;

/**
 * RMQ as Spring Modulith's event externalization target, when the application has Modulith's events and RMQ: events
 * selected by Modulith's {@link EventExternalizationConfiguration} (by default those annotated
 * {@code @Externalized}) are sent to RMQ by {@link RmqEventExternalizationTransport} after their transaction commits,
 * from Modulith's event publication registry (its outbox). Off with
 * {@code spring.modulith.events.externalization.enabled=false}, as Modulith's own externalizers; only Modulith's
 * default {@code module-listener} mode. Each bean backs off when the application defines its own.
 */
@AutoConfiguration(after = {RmqAutoConfiguration.class, EventExternalizationAutoConfiguration.class})
@ConditionalOnClass({EventExternalizationTransport.class, EventExternalizerModuleListener.class})
@ConditionalOnBean({Rmq.class, EventExternalizationConfiguration.class})
@ConditionalOnBooleanProperty(name = "spring.modulith.events.externalization.enabled", matchIfMissing = true)
public class RmqModulithAutoConfiguration {

    /** The externalizer's bean name: an application's bean of this name replaces it. */
    public static final String EXTERNALIZER = "rmqEventExternalizer";

    @Bean
    @ConditionalOnMissingBean
    public RmqEventExternalizationTransport rmqEventExternalizationTransport(Rmq rmq,
            EventExternalizationConfiguration configuration, BeanFactory beanFactory,
            ObjectProvider<RmqProperties> properties) {
        RmqProperties rmqProperties = properties.getIfAvailable();
        return new RmqEventExternalizationTransport(rmq, configuration, beanFactory,
                rmqProperties != null && rmqProperties.producer().typeHeader());
    }

    /** Modulith's listener: records each externalized event's publication and completes it when the send did. */
    @Bean(EXTERNALIZER)
    @ConditionalOnMissingBean(name = EXTERNALIZER)
    @ConditionalOnProperty(name = ExternalizationMode.PROPERTY, havingValue = "module-listener", matchIfMissing = true)
    public EventExternalizerModuleListener rmqEventExternalizer(EventExternalizationConfiguration configuration,
            RmqEventExternalizationTransport transport) {
        return new EventExternalizerModuleListener(configuration, transport);
    }
}
