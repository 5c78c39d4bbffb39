package io.rmq.spring.listener;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.test.ContextFailureLogs;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/** One INFO line when the listeners start (engine, topics, listeners) and one when they stop. */
@ExtendWith({RedisServersExtension.class, ContextFailureLogs.class})
class LifecycleLogLinesTest {

    @Configuration(proxyBeanMethods = false)
    static class Listeners {

        @RmqListener(id = "ledger", topic = "log-ledger", mode = "ORDERLY", concurrency = "2")
        void ledger(String body) {
        }

        @RmqListener(id = "mails", topic = "log-mails", concurrency = "3")
        void mails(String body) {
        }
    }

    @Test
    void oneLineAtStartAndOneAtShutdown() {
        String prefix = "log-" + UUID.randomUUID().toString().substring(0, 8);
        try (LogCapture log = LogCapture.of(RmqListenerEndpointRegistry.class.getName())) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                            JacksonAutoConfiguration.class, RmqAutoConfiguration.class))
                    .withUserConfiguration(Listeners.class)
                    .withPropertyValues(RedisTopology.STANDALONE.propertyValues(prefix))
                    .withPropertyValues("rmq.topics.log-ledger.type=FIXED_TIME",
                            "rmq.topics.log-ledger.slot-amount=4", "rmq.topics.log-mails.type=PRIORITY",
                            "rmq.topics.log-mails.slot-amount=2")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        context.getBean(RmqTemplate.class).sendFixedTime("log-ledger", "x", Instant.now());
                    });
            List<String> lines = log.messages();
            assertThat(lines).hasSize(2);
            String redis = RedisTopology.STANDALONE.springProperties().get("spring.data.redis.host") + ":"
                    + RedisTopology.STANDALONE.springProperties().get("spring.data.redis.port");
            assertThat(lines.get(0)).isEqualTo("RMQ started: Redis standalone " + redis + " (RMQ's own client), key"
                    + " prefix '" + prefix + "', 2 topic(s) [log-ledger (FIXED_TIME, 4 slots, ORDERLY), log-mails"
                    + " (PRIORITY, 2 slots, CONCURRENT)]; 2 listener(s) [ledger -> log-ledger (ORDERLY, concurrency 2),"
                    + " mails -> log-mails (CONCURRENT, concurrency 3)]");
            assertThat(lines.get(1)).matches("RMQ stopped 2 listener\\(s\\) in \\d+ ms; handed back: (nothing|\\d+"
                    + " unstarted message\\(s\\) returned to the store, \\d+ ORDERLY slot\\(s\\) released); still"
                    + " running after the shutdown timeout: nothing");
            assertThat(log.events()).allMatch(e -> e.getLevel() == ch.qos.logback.classic.Level.INFO);
        }
    }
}
