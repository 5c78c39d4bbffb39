package io.rmq.test.context;

import java.util.List;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.rmq.Rmq;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.jspecify.annotations.Nullable;

/**
 * Wires the Redis of an {@link RmqTest} class into its application context (registered in
 * {@code META-INF/spring.factories}, as Spring Boot's own test customizers): {@code spring.data.redis.*} in a property
 * source ahead of the application's, so its {@code application.yml} cannot send the test to another server, and the
 * {@link RmqTestSupport} bean with the recorder it reads.
 */
public final class RmqTestContextCustomizerFactory implements ContextCustomizerFactory {

    static final String PROPERTY_SOURCE = "rmqTestRedis";

    /** Contexts wired to a test Redis and not yet closed: closed before the servers stop (see {@link RmqTestExtension}). */
    private static final Set<ConfigurableApplicationContext> LIVE_CONTEXTS = ConcurrentHashMap.newKeySet();

    @Override
    public @Nullable ContextCustomizer createContextCustomizer(Class<?> testClass,
            List<ContextConfigurationAttributes> configAttributes) {
        RmqTest rmqTest = TestContextAnnotationUtils.findMergedAnnotation(testClass, RmqTest.class);
        return rmqTest == null ? null : new Customizer(rmqTest.topology(), rmqTest.source(), rmqTest.keyPrefix());
    }

    /** Closes every context wired to a test Redis that is still open (Spring's context cache would close it at exit). */
    static void closeLiveContexts() {
        for (ConfigurableApplicationContext context : List.copyOf(LIVE_CONTEXTS)) {
            if (context.isActive()) {
                context.close();
            }
            LIVE_CONTEXTS.remove(context);
        }
    }

    /** Equal for equal attributes, so that Spring's context cache shares a context between such test classes. */
    private record Customizer(RmqTest.Topology topology, RmqTest.Source source, String keyPrefix) implements ContextCustomizer {

        @Override
        public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration mergedConfig) {
            RmqTestRedis.Connection connection = RmqTestRedis.connection(topology, source);
            Map<String, Object> properties = new HashMap<>(connection.springProperties());
            // a prefix of this context's own unless the test fixes one: cached contexts stay apart on the shared server
            properties.put("rmq.key-prefix", keyPrefix.isEmpty() ? "rmq-test-" + UUID.randomUUID() : keyPrefix);
            context.getEnvironment().getPropertySources().addFirst(new MapPropertySource(PROPERTY_SOURCE, properties));
            if (context.getBeanFactory() instanceof BeanDefinitionRegistry registry) {
                registry.registerBeanDefinition("rmqTestHandledRecorder", new RootBeanDefinition(HandledRecorder.class));
                RootBeanDefinition support = new RootBeanDefinition(RmqTestSupport.class,
                        () -> new RmqTestSupport(context.getBean(Rmq.class), context.getBean(HandledRecorder.class)));
                support.setLazyInit(true);
                registry.registerBeanDefinition("rmqTestSupport", support);
            } else {
                throw new IllegalStateException("@RmqTest needs a context whose bean factory takes bean definitions; "
                        + context.getBeanFactory().getClass().getName() + " does not");
            }
            LIVE_CONTEXTS.add(context);
            context.addApplicationListener((ApplicationListener<ContextClosedEvent>) event -> {
                if (event.getApplicationContext() == context) {
                    LIVE_CONTEXTS.remove(context);
                }
            });
        }
    }
}
