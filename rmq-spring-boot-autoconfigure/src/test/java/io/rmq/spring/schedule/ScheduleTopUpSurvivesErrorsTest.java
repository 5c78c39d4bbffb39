package io.rmq.spring.schedule;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import ch.qos.logback.classic.Level;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.rmq.core.internal.BackgroundTask;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The schedule top-up keeps its schedule after a run that throws an {@link Error}: the next top-up (every
 * {@value RmqScheduler#TOP_UP_SECONDS} s) says again that this instance holds the definition. Without the guard the
 * executor ended the task at the first throw: the definition aged out and no firing was queued any more.
 */
@ExtendWith(RedisServersExtension.class)
class ScheduleTopUpSurvivesErrorsTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
    }

    @Test
    void theTopUpRunsAgainAfterARunThatThrewAnError() {
        String prefix = "topup-" + UUID.randomUUID().toString().substring(0, 8);
        List<String> properties = new ArrayList<>(List.of(RedisTopology.STANDALONE.propertyValues(prefix)));
        properties.addAll(List.of("rmq.topics.beats.type=FIXED_TIME", "rmq.topics.beats.slot-amount=2",
                "rmq.schedules.beat.fixed-rate=1m", "rmq.schedules.beat.topic=beats",
                "rmq.schedules.beat.payload=beat", "rmq.shutdown-timeout=5s"));
        RedisClient client = RedisClient.create(RedisTopology.STANDALONE.uris().get(0));
        try (StatefulRedisConnection<String, String> raw = client.connect()) {
            BackgroundTask.failNextRun(RmqScheduler.TOP_UP_TASK, new AssertionError("thrown on purpose by the test"));
            String key = prefix + ":{rmq-schedules}:beat";
            ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
                    .web(WebApplicationType.NONE).properties(properties.toArray(String[]::new)).run();
            // captured once the context has started (its logging system set logback up anew)
            try (context; LogCapture log = LogCapture.of(BackgroundTask.class.getName())
                    .expecting("'schedule top-up'")) {
                // the first top-up, TOP_UP_SECONDS after the start, throws
                await().atMost(Duration.ofSeconds(RmqScheduler.TOP_UP_SECONDS * 3))
                        .until(() -> !BackgroundTask.injectionPending(RmqScheduler.TOP_UP_TASK));
                long seenAfterTheError = Long.parseLong(raw.sync().hget(key, "seen"));
                // the next one registers the definition again
                await().atMost(Duration.ofSeconds(RmqScheduler.TOP_UP_SECONDS * 3))
                        .until(() -> Long.parseLong(raw.sync().hget(key, "seen")) > seenAfterTheError);
                assertThat(log.events()).filteredOn(e -> e.getLevel() == Level.ERROR).singleElement()
                        .satisfies(e -> assertThat(e.getFormattedMessage()).isEqualTo(
                                "RMQ background task 'schedule top-up' failed; it keeps its schedule and runs again"));
                await().atMost(Duration.ofSeconds(5)).until(() -> log.messages()
                        .contains("RMQ background task 'schedule top-up' runs again"));
            }
        }
        finally {
            BackgroundTask.clearInjection(RmqScheduler.TOP_UP_TASK);
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}
