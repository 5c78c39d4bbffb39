package io.rmq.benchmarks.peers.rqueue;

import com.github.sonus21.rqueue.config.SimpleRqueueListenerContainerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Only with {@code --tuned}: Rqueue's documented throughput knobs on the listener container factory (poll interval,
 * back-off when a queue is empty). The default run uses none of this: Rqueue's defaults are 200 ms polling interval
 * and 5,000 ms back-off, with 10 messages per poll.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "bench.tuned", havingValue = "true")
public class TunedConfig {

    @Bean
    public SimpleRqueueListenerContainerFactory simpleRqueueListenerContainerFactory() {
        SimpleRqueueListenerContainerFactory factory = new SimpleRqueueListenerContainerFactory();
        factory.setPollingInterval(10);
        factory.setBackOffTime(50);
        return factory;
    }
}
