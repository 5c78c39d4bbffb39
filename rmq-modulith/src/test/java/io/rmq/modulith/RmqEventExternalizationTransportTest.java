package io.rmq.modulith;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.rmq.admin.MessageRef;
import io.rmq.admin.MessageStatus;
import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.producer.SendResult;
import io.rmq.spring.RmqHeaders;
import io.rmq.spring.RmqTemplate;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.RoutingTarget;
import org.springframework.modulith.events.config.EventExternalizationAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the transport sends for an event, on a real Redis: topic and id from the routing target, the defaults and the
 * {@link RmqExternalized} timing per topic type, the group, headers, and the errors of a timing that does not fit.
 */
@ExtendWith(RedisServersExtension.class)
class RmqEventExternalizationTransportTest {

    public record Plain(String id) {
    }

    @RmqExternalized(priority = "#{urgent() ? 10 : 1}", group = "#{customer()}")
    public record Urgent(String id, boolean urgent, String customer) {
    }

    @RmqExternalized(dueAt = "#{due()}")
    public record Due(String id, Instant due) {
    }

    @RmqExternalized(delay = "5m")
    public record Delayed(String id) {
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
                    RmqAutoConfiguration.class, EventExternalizationAutoConfiguration.class,
                    RmqModulithAutoConfiguration.class))
            .withPropertyValues(RedisTopology.STANDALONE.propertyValues("modulith-tr-" + UUID.randomUUID()))
            .withPropertyValues("rmq.topics.t-fixed.type=FIXED_TIME", "rmq.topics.t-prio.type=PRIORITY",
                    "rmq.topics.t-range.type=RANGE_MERGE", "rmq.producer.type-header=true")
            .withBean(EventExternalizationConfiguration.class, () -> EventExternalizationConfiguration
                    .externalizing().select(event -> true)
                    .headers(Plain.class, event -> Map.of("tenant", "acme"))
                    .build());

    private static RoutingTarget keyed(String topic) {
        return RoutingTarget.forTarget(topic).andKey("#{id()}");
    }

    private static SendResult send(AssertableApplicationContext context, Object event, RoutingTarget target)
            throws Exception {
        CompletableFuture<SendResult> sent = context.getBean(RmqEventExternalizationTransport.class)
                .externalize(event, target);
        return sent.get(10, TimeUnit.SECONDS);
    }

    @Test
    void withoutRmqExternalizedAnEventIsDueAtOnceWithTheKeyAsIdAndTheConfiguredAndTypeHeaders() {
        runner.run(context -> {
            RmqTemplate template = context.getBean(RmqTemplate.class);
            long before = System.currentTimeMillis();
            send(context, new Plain("p-1"), keyed("t-fixed"));
            send(context, new Plain("p-1"), keyed("t-prio"));
            send(context, new Plain("p-1"), keyed("t-range"));
            long after = System.currentTimeMillis();

            MessageStatus fixed = template.admin().find(MessageRef.id("t-fixed", "p-1"));
            assertThat(fixed.waitingScore().longValue()).as("due now").isBetween(before - 5_000, after + 5_000);
            assertThat(fixed.headers()).containsEntry("tenant", "acme")
                    .containsEntry(RmqHeaders.TYPE_ID, Plain.class.getName());
            assertThat(fixed.bodyAsString()).isEqualTo("{\"id\":\"p-1\"}");
            assertThat(template.admin().find(MessageRef.id("t-prio", "p-1")).waitingScore()).as("priority 0").isZero();
            assertThat(template.admin().find(MessageRef.id("t-range", "p-1")).waitingScore().longValue())
                    .as("a 1 ms window")
                    .isBetween(before - 5_000, after + 5_000);
        });
    }

    @Test
    void aSecondSendOfAnIdMergesWithTheFirst() {
        runner.run(context -> {
            assertThat(send(context, new Plain("p-2"), keyed("t-range")).merged()).isFalse();
            assertThat(send(context, new Plain("p-2"), keyed("t-range")).merged()).isTrue();
        });
    }

    @Test
    void withoutAKeyTheBodyIsTheIdentity() {
        runner.run(context -> {
            send(context, new Plain("p-3"), RoutingTarget.forTarget("t-fixed").withoutKey());
            assertThat(send(context, new Plain("p-3"), RoutingTarget.forTarget("t-fixed").withoutKey()).merged())
                    .isTrue();
            assertThat(context.getBean(RmqTemplate.class).admin()
                    .contains(MessageRef.body("t-fixed", new Plain("p-3")))).isTrue();
        });
    }

    @Test
    void priorityAndGroupComeFromTheEvent() {
        runner.run(context -> {
            send(context, new Urgent("u-1", true, "acme"), keyed("t-prio"));
            send(context, new Urgent("u-2", false, "acme"), keyed("t-prio"));
            RmqTemplate template = context.getBean(RmqTemplate.class);
            assertThat(template.admin().find(MessageRef.id("t-prio", "u-1").inGroup("acme")).waitingScore())
                    .isEqualTo(10.0);
            assertThat(template.admin().find(MessageRef.id("t-prio", "u-2").inGroup("acme")).waitingScore())
                    .isEqualTo(1.0);
        });
    }

    @Test
    void aFixedTimeEventIsDueWhenItSaysOrItsDelayAfterTheSend() {
        runner.run(context -> {
            Instant due = Instant.parse("2031-01-02T03:04:05.678Z");
            send(context, new Due("d-1", due), keyed("t-fixed"));
            long before = System.currentTimeMillis();
            send(context, new Delayed("d-2"), keyed("t-fixed"));
            long after = System.currentTimeMillis();
            RmqTemplate template = context.getBean(RmqTemplate.class);
            assertThat(template.admin().find(MessageRef.id("t-fixed", "d-1")).waitingScore().longValue())
                    .isEqualTo(due.toEpochMilli());
            assertThat(template.admin().find(MessageRef.id("t-fixed", "d-2")).waitingScore().longValue()).isBetween(
                    before + Duration.ofMinutes(5).toMillis(), after + Duration.ofMinutes(5).toMillis());
        });
    }

    @Test
    void aTimingTheTopicsTypeDoesNotTakeFailsTheSendNamingTheEventTheAttributeAndTheRule() {
        runner.run(context -> {
            try (LogCapture log = LogCapture.of("io.rmq.modulith").expecting("stays incomplete")) {
                assertThatThrownBy(() -> send(context, new Delayed("x-1"), keyed("t-prio")))
                        .isInstanceOf(ExecutionException.class).cause()
                        .isInstanceOf(RmqInvalidArgumentException.class)
                        .hasMessage("Invalid @RmqExternalized(delay) of " + Delayed.class.getName() + " '5m': applies"
                                + " to RANGE_MERGE and FIXED_TIME topics only (topic 't-prio' is PRIORITY)");
                assertThatThrownBy(() -> send(context, new Due("x-2", Instant.now()), keyed("t-range")))
                        .cause().hasMessageContaining("@RmqExternalized(dueAt)")
                        .hasMessageContaining("applies to FIXED_TIME topics only (topic 't-range' is RANGE_MERGE)");
                assertThat(log.warnings()).hasSize(2).allSatisfy(line -> assertThat(line)
                        .contains("not sent, its publication stays incomplete"));
            }
            assertThat(context.getBean(RmqTemplate.class).admin().find(MessageRef.id("t-prio", "x-1")).exists())
                    .isFalse();
        });
    }
}
