package io.rmq.spring;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.rmq.admin.DeadMessage;
import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.annotation.RmqHandler;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.test.ContextFailureLogs;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.messaging.Message;
import org.springframework.messaging.MessageHeaders;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Headers;
import org.springframework.messaging.support.MessageBuilder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A message's id and headers through Spring, on a real Redis, standalone and cluster: {@link RmqTemplate} sends a
 * Spring {@code Message<?>} (and refuses bad ones before anything is written), listeners read the id and headers with
 * {@code @Header}, {@code @Headers}, {@code MessageHeaders}, {@code Message<T>}, {@code RmqMessage<T>} and per element
 * in a batch, sends of one id merge into the newest payload and headers, and a {@code __TypeId__} header chooses the
 * {@code @RmqHandler}.
 */
@ExtendWith({RedisServersExtension.class, ContextFailureLogs.class})
class MessageIdAndHeadersTest {

    record Order(long number, String state) {
    }

    /** What a single-message listener saw. */
    record Seen(Order payload, @Nullable String id, @Nullable String tenant, Map<String, Object> headers,
            MessageHeaders messageHeaders, @Nullable Object messageTenant) {
    }

    /** What one element of a batch came with: from RmqMessage and from the header lists at its index. */
    record Element(long number, @Nullable String id, Map<String, String> headers, @Nullable String idFromList,
            @Nullable String tenantFromList) {
    }

    static class Listeners {

        final BlockingQueue<Seen> single = new LinkedBlockingQueue<>();
        final BlockingQueue<RmqMessage<Order>> rmqMessages = new LinkedBlockingQueue<>();
        final BlockingQueue<RmqMessage<Order>> merged = new LinkedBlockingQueue<>();
        final List<Element> batched = new CopyOnWriteArrayList<>();

        @RmqListener(topic = "h-single", type = "FIXED_TIME", slotAmount = "4")
        void single(Message<Order> message, @Header(name = RmqHeaders.ID, required = false) @Nullable String id,
                @Header(name = "tenant", required = false) @Nullable String tenant,
                @Headers Map<String, Object> headers, MessageHeaders messageHeaders) {
            single.add(new Seen(message.getPayload(), id, tenant, headers, messageHeaders,
                    message.getHeaders().get("tenant")));
        }

        @RmqListener(topic = "h-rmq", type = "PRIORITY", slotAmount = "2")
        void rmqMessage(RmqMessage<Order> message) {
            rmqMessages.add(message);
        }

        @RmqListener(topic = "h-merge", type = "RANGE_MERGE", slotAmount = "4")
        void merged(RmqMessage<Order> message) {
            merged.add(message);
        }

        @RmqListener(topic = "h-batch", type = "FIXED_TIME", slotAmount = "1", batch = "true", batchSize = "10")
        void batch(List<RmqMessage<Order>> messages,
                @Header(name = RmqHeaders.ID, required = false) @Nullable List<String> ids,
                @Header(name = "tenant", required = false) @Nullable List<String> tenants) {
            for (int i = 0; i < messages.size(); i++) {
                RmqMessage<Order> m = messages.get(i);
                batched.add(new Element(m.payload().number(), m.id(), m.headers(), ids == null ? null : ids.get(i),
                        tenants == null ? null : tenants.get(i)));
            }
        }
    }

    private static ApplicationContextRunner app(RedisTopology topology, String keyPrefix) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                        JacksonAutoConfiguration.class, RmqAutoConfiguration.class))
                .withPropertyValues(topology.springProperties().entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue()).toArray(String[]::new))
                .withPropertyValues("rmq.key-prefix=" + keyPrefix);
    }

    private static String prefix() {
        return "headers-" + UUID.randomUUID();
    }

    @ParameterizedTest
    @EnumSource(RedisTopology.class)
    void listenersGetTheIdAndHeadersASpringMessageWasSentWith(RedisTopology topology) {
        app(topology, prefix()).withBean(Listeners.class).run(context -> {
            assertThat(context).hasNotFailed();
            RmqTemplate template = context.getBean(RmqTemplate.class);
            Listeners listeners = context.getBean(Listeners.class);

            template.sendFixedTime("h-single", MessageBuilder.withPayload(new Order(1, "paid"))
                    .setHeader(RmqHeaders.ID, "order-1").setHeader("tenant", "acme").setHeader("trace-me", "yes")
                    .build(), Instant.now());
            Seen seen = listeners.single.poll(30, TimeUnit.SECONDS);
            assertThat(seen).isNotNull();
            assertThat(seen.payload()).isEqualTo(new Order(1, "paid"));
            assertThat(seen.id()).isEqualTo("order-1");
            assertThat(seen.tenant()).isEqualTo("acme");
            assertThat(seen.messageTenant()).isEqualTo("acme");
            assertThat(seen.headers()).containsEntry("tenant", "acme").containsEntry("trace-me", "yes")
                    .containsEntry(RmqHeaders.ID, "order-1").containsEntry(RmqHeaders.TOPIC, "h-single")
                    .as("Spring's id and timestamp are not sent").doesNotContainKeys("timestamp", "id");
            assertThat(seen.messageHeaders().get("trace-me")).isEqualTo("yes");

            // without an id or headers: the headers are absent, the delivery's own are there
            template.sendFixedTime("h-single", new Order(2, "new"), Instant.now());
            Seen plain = listeners.single.poll(30, TimeUnit.SECONDS);
            assertThat(plain).isNotNull();
            assertThat(plain.id()).isNull();
            assertThat(plain.tenant()).isNull();
            assertThat(plain.headers()).doesNotContainKeys(RmqHeaders.ID, "tenant").containsKey(RmqHeaders.ATTEMPT);

            template.sendPriority("h-rmq", MessageBuilder.withPayload(new Order(3, "shipped"))
                    .setHeader(RmqHeaders.ID, "order-3").setHeader(RmqHeaders.GROUP, "customer-9")
                    .setHeader("tenant", "globex").build(), 5);
            RmqMessage<Order> message = listeners.rmqMessages.poll(30, TimeUnit.SECONDS);
            assertThat(message).isNotNull();
            assertThat(message.payload()).isEqualTo(new Order(3, "shipped"));
            assertThat(message.id()).isEqualTo("order-3");
            assertThat(message.headers()).isEqualTo(Map.of("tenant", "globex"));
            assertThat(message.header("tenant")).isEqualTo("globex");
            assertThat(message.bodyAsString()).contains("shipped");
            assertThat(message.slot()).as("routed by its group: CRC32(group) & (slotAmount - 1)")
                    .isEqualTo(crc32("customer-9") & 1);

            // a batch: each element with its own id and headers, the header lists aligned with the elements
            List<OutgoingMessage> batch = new ArrayList<>();
            Instant due = Instant.now().plusMillis(500);
            for (long n = 0; n < 6; n++) {
                OutgoingMessage m = OutgoingMessage.fixedTime("h-batch", new Order(n, "batched"), due);
                if (n % 2 == 0) {
                    m = m.withId("b-" + n).withHeader("tenant", "t-" + n);
                }
                else if (n == 3) {
                    m = m.withHeader("other", "x");
                }
                batch.add(m);
            }
            template.sendBatch(batch);
            await().atMost(Duration.ofSeconds(30)).until(() -> listeners.batched.size() >= 6);
            assertThat(listeners.batched).hasSize(6).allSatisfy(e -> {
                if (e.number() % 2 == 0) {
                    assertThat(e.id()).isEqualTo("b-" + e.number()).isEqualTo(e.idFromList());
                    assertThat(e.headers()).isEqualTo(Map.of("tenant", "t-" + e.number()));
                    assertThat(e.tenantFromList()).isEqualTo("t-" + e.number());
                }
                else {
                    assertThat(e.id()).isNull();
                    assertThat(e.idFromList()).isNull();
                    assertThat(e.tenantFromList()).isNull();
                    assertThat(e.headers()).isEqualTo(e.number() == 3 ? Map.of("other", "x") : Map.of());
                }
            });
        });
    }

    @ParameterizedTest
    @EnumSource(RedisTopology.class)
    void sendsOfOneIdMergeAndTheNewestPayloadAndHeadersAreDelivered(RedisTopology topology) {
        app(topology, prefix()).withBean(Listeners.class).run(context -> {
            assertThat(context).hasNotFailed();
            RmqTemplate template = context.getBean(RmqTemplate.class);
            Listeners listeners = context.getBean(Listeners.class);
            List<Boolean> merged = new ArrayList<>();
            for (String state : List.of("created", "paid", "shipped")) {
                // a range longer than a loaded machine takes for the three sends: they fall into the first one's
                merged.add(template.sendRangeMerge("h-merge", MessageBuilder.withPayload(new Order(42, state))
                        .setHeader(RmqHeaders.ID, "order-42").setHeader("state", state).build(), Duration.ofSeconds(3))
                        .merged());
            }
            assertThat(merged).containsExactly(false, true, true);
            RmqMessage<Order> delivered = listeners.merged.poll(30, TimeUnit.SECONDS);
            assertThat(delivered).isNotNull();
            assertThat(delivered.payload()).isEqualTo(new Order(42, "shipped"));
            assertThat(delivered.id()).isEqualTo("order-42");
            assertThat(delivered.headers()).isEqualTo(Map.of("state", "shipped"));
            assertThat(listeners.merged.poll(1, TimeUnit.SECONDS)).as("one delivery for the three sends").isNull();
        });
    }

    @ParameterizedTest
    @EnumSource(RedisTopology.class)
    void badSpringMessagesAreRefusedNamingHeaderValueAndRuleAndNothingIsWritten(RedisTopology topology) {
        String keyPrefix = prefix();
        app(topology, keyPrefix).withPropertyValues("rmq.topics.h-bad.type=FIXED_TIME",
                "rmq.topics.h-bad.slot-amount=4").run(context -> {
                    assertThat(context).hasNotFailed();
                    RmqTemplate template = context.getBean(RmqTemplate.class);
                    Instant now = Instant.now();
                    Order order = new Order(7, "bad");

                    assertThatThrownBy(() -> template.sendFixedTime("h-bad", MessageBuilder.withPayload(order)
                            .setHeader("tenant", 42).build(), now))
                            .isInstanceOf(RmqInvalidArgumentException.class)
                            .hasMessageContaining("header 'tenant' value")
                            .hasMessageContaining("java.lang.Integer").hasMessageContaining("must be a String");
                    assertThatThrownBy(() -> template.sendFixedTime("h-bad", MessageBuilder.withPayload(order)
                            .setHeader(RmqHeaders.ID, 42L).build(), now))
                            .isInstanceOf(RmqInvalidArgumentException.class)
                            .hasMessageContaining("header 'rmq_id' value").hasMessageContaining("must be a String");
                    assertThatThrownBy(() -> template.sendFixedTime("h-bad", MessageBuilder.withPayload(order)
                            .setHeader("rmq_tenant", "acme").build(), now))
                            .isInstanceOf(RmqInvalidArgumentException.class)
                            .hasMessageContaining("rmq_tenant").hasMessageContaining("reserved prefix rmq_");
                    assertThatThrownBy(() -> template.sendFixedTime("h-bad", MessageBuilder.withPayload(order)
                            .setHeader(OutgoingMessage.GROUP_HEADER, "customer-1").build(), now))
                            .isInstanceOf(RmqInvalidArgumentException.class)
                            .hasMessage("Invalid header 'rmq-group': is reserved: RMQ stores the message's group"
                                    + " under it; set the group with the header rmq_group (RmqHeaders.GROUP)"
                                    + " (topic 'h-bad')");
                    assertThatThrownBy(() -> template.sendFixedTime("h-bad", MessageBuilder.withPayload(order)
                            .setHeader(RmqHeaders.ID, "").build(), now))
                            .isInstanceOf(RmqInvalidArgumentException.class)
                            .hasMessageContaining("Invalid id ''").hasMessageContaining("non-empty");
                    assertThatThrownBy(() -> template.sendFixedTime("h-bad", MessageBuilder.withPayload(order)
                            .setHeader(RmqHeaders.ID, "x".repeat(257)).build(), now))
                            .isInstanceOf(RmqInvalidArgumentException.class)
                            .hasMessageContaining("must be at most 256 bytes (rmq.max-id-size");
                    assertThatThrownBy(() -> template.sendFixedTime("h-bad", MessageBuilder.withPayload(order)
                            .setHeader("note", "n".repeat(1025)).build(), now))
                            .isInstanceOf(RmqInvalidArgumentException.class)
                            .hasMessageContaining("note")
                            .hasMessageContaining("must be at most 1024 bytes (rmq.max-header-value-size");

                    assertThat(slotKeys(topology, keyPrefix, "h-bad")).as("nothing written").isEmpty();
                    assertThat(template.admin().stats("h-bad").waiting()).isZero();

                    // the dead-letter story's names may be sent, a good message goes through
                    template.sendFixedTime("h-bad", MessageBuilder.withPayload(order)
                            .setHeader(RmqHeaders.DLT_ORIGINAL_TOPIC, "orders").build(), now.plusSeconds(600));
                    assertThat(template.admin().stats("h-bad").waiting()).isEqualTo(1);
                    assertThat(slotKeys(topology, keyPrefix, "h-bad")).isNotEmpty();
                });
    }

    /** The keys of the topic's slots (store, msg, ...), on every master. */
    private static List<String> slotKeys(RedisTopology topology, String keyPrefix, String topic) {
        AbstractRedisClient client = topology.newClient();
        try {
            String pattern = keyPrefix + ":{" + topic + ":*";
            if (client instanceof RedisClusterClient cluster) {
                try (var connection = cluster.connect()) {
                    // the advanced cluster API runs KEYS on every master and joins the replies
                    return connection.sync().keys(pattern);
                }
            }
            try (var connection = ((RedisClient) client).connect()) {
                return connection.sync().keys(pattern);
            }
        }
        finally {
            client.shutdown();
        }
    }

    /** An ORDERLY listener: the group RMQ stored comes as RmqHeaders.GROUP and as the message header rmq-group. */
    static class Ordered {
        final BlockingQueue<String> seen = new LinkedBlockingQueue<>();

        @RmqListener(topic = "h-ordered", type = "FIXED_TIME", slotAmount = "2", mode = "ORDERLY")
        void ordered(RmqMessage<Order> message,
                @Header(name = RmqHeaders.GROUP, required = false) @Nullable String group,
                @Header(name = OutgoingMessage.GROUP_HEADER, required = false) @Nullable String stored) {
            seen.add(message.payload().number() + " " + group + " " + stored + " " + message.group() + " "
                    + message.headers());
        }
    }

    @ParameterizedTest
    @EnumSource(RedisTopology.class)
    void anOrderlyListenerGetsTheGroupTheMessageWasSentIn(RedisTopology topology) {
        app(topology, prefix()).withBean(Ordered.class).run(context -> {
            assertThat(context).hasNotFailed();
            RmqTemplate template = context.getBean(RmqTemplate.class);
            Ordered ordered = context.getBean(Ordered.class);
            template.sendFixedTime("h-ordered", MessageBuilder.withPayload(new Order(1, "paid"))
                    .setHeader(RmqHeaders.GROUP, "customer-9").setHeader("tenant", "acme").build(), Instant.now());
            assertThat(ordered.seen.poll(30, TimeUnit.SECONDS))
                    .isEqualTo("1 customer-9 customer-9 customer-9 {rmq-group=customer-9, tenant=acme}");
            template.sendFixedTime("h-ordered", new Order(2, "new"), Instant.now());
            assertThat(ordered.seen.poll(30, TimeUnit.SECONDS)).isEqualTo("2 null null null {}");
        });
    }

    record Created(String id) {
    }

    record Cancelled(String id) {
    }

    /** Both types read {"id":...}: without a type header the handler declared first takes such a body. */
    @RmqListener(topic = "h-events", type = "FIXED_TIME", slotAmount = "4")
    static class Events {
        final BlockingQueue<String> handled = new LinkedBlockingQueue<>();

        @RmqHandler
        void created(Created created, @Header(name = RmqHeaders.TYPE_ID, required = false) @Nullable String type) {
            handled.add("created " + created.id() + " " + (type == null ? "-"
                    : type.substring(Math.max(type.lastIndexOf('$'), type.lastIndexOf('.')) + 1)));
        }

        @RmqHandler
        void cancelled(Cancelled cancelled) {
            handled.add("cancelled " + cancelled.id());
        }

        @RmqHandler
        void text(String text) {
            handled.add("text " + text);
        }
    }

    @ParameterizedTest
    @EnumSource(RedisTopology.class)
    void aTypeHeaderChoosesTheRmqHandlerBeforeTheBodyIsTried(RedisTopology topology) {
        app(topology, prefix()).withPropertyValues("rmq.producer.type-header=true").withBean("events", Events.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    RmqTemplate template = context.getBean(RmqTemplate.class);
                    Instant now = Instant.now();
                    // the template names the payload's class: the Cancelled handler, though the body fits Created
                    template.sendFixedTime("h-events", new Cancelled("1"), now);
                    template.sendFixedTime("h-events", new Created("2"), now);
                    // a String payload gets no type header: tried against the handlers as before
                    template.sendFixedTime("h-events", "{\"id\":\"3\"}", now);
                    // a header that names no handler's type: as before, the body decides
                    template.send(OutgoingMessage.fixedTime("h-events", new Cancelled("4"), now)
                            .withHeader(RmqHeaders.TYPE_ID, "com.example.Unknown"));
                    // the sender's own type header wins over the template's
                    template.send(OutgoingMessage.fixedTime("h-events", new Created("5"), now)
                            .withHeader(RmqHeaders.TYPE_ID, Cancelled.class.getName()));
                    // a String handler named by the header takes any body
                    template.send(OutgoingMessage.fixedTime("h-events", new Created("6"), now)
                            .withHeader(RmqHeaders.TYPE_ID, "java.lang.String"));
                    Events events = context.getBean(Events.class);
                    await().atMost(Duration.ofSeconds(30)).until(() -> events.handled.size() >= 6);
                    assertThat(events.handled).containsExactlyInAnyOrder("cancelled 1", "created 2 Created",
                            "created 3 -", "created 4 Unknown", "cancelled 5", "text {\"id\":\"6\"}");

                    // the handler the header names cannot read the body: dead at once with the reason, not retried
                    try (LogCapture log = LogCapture.rmq().expecting("chose the @RmqHandler")) {
                        template.send(OutgoingMessage.fixedTime("h-events", List.of(1, 2), now)
                                .withHeader(RmqHeaders.TYPE_ID, Created.class.getName()));
                        await().atMost(Duration.ofSeconds(30)).until(() -> template.admin().deadCount("h-events") == 1
                                && log.warnings().size() == 1);
                    }
                    DeadMessage dead = template.admin().deadMessages("h-events", 0, 10).get(0);
                    assertThat(dead.attempts()).isEqualTo(1);
                    assertThat(dead.lastError()).contains("the message's __TypeId__ '" + Created.class.getName()
                            + "' chose the @RmqHandler 'Events.created', which cannot read it as Created");
                    assertThat(events.handled).hasSize(6);
                });
    }

    @Test
    void theIdAndHeaderLimitsAreTakenFromProperties() {
        String keyPrefix = prefix();
        app(RedisTopology.STANDALONE, keyPrefix).withPropertyValues("rmq.max-id-size=8B",
                "rmq.max-header-value-size=16B", "rmq.max-headers-size=40B", "rmq.max-headers=2",
                "rmq.topics.h-limits.type=PRIORITY").run(context -> {
                    assertThat(context).hasNotFailed();
                    RmqTemplate template = context.getBean(RmqTemplate.class);
                    assertThat(template.getRmq().options().limits()).isEqualTo(
                            new io.rmq.producer.MessageLimits(8, 16, 40, 2));
                    OutgoingMessage base = OutgoingMessage.priority("h-limits", "body", 1);
                    assertThatThrownBy(() -> template.send(base.withId("123456789")))
                            .isInstanceOf(RmqInvalidArgumentException.class)
                            .hasMessageContaining("must be at most 8 bytes (rmq.max-id-size");
                    assertThatThrownBy(() -> template.send(base.withHeader("h", "v".repeat(17))))
                            .isInstanceOf(RmqInvalidArgumentException.class)
                            .hasMessageContaining("must be at most 16 bytes (rmq.max-header-value-size");
                    assertThatThrownBy(() -> template.send(base.withHeaders(Map.of("a", "1", "b", "2", "c", "3"))))
                            .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("rmq.max-headers;");
                    assertThatThrownBy(() -> template.send(base.withHeaders(Map.of("aaaaaaaaaa", "1234567890123456",
                            "bbbbbbbbbb", "1234567890123456"))))
                            .isInstanceOf(RmqInvalidArgumentException.class)
                            .hasMessageContaining("rmq.max-headers-size");
                    assertThat(slotKeys(RedisTopology.STANDALONE, keyPrefix, "h-limits")).as("nothing written").isEmpty();
                    assertThat(template.send(base.withId("12345678").withHeader("h", "v".repeat(16))).merged())
                            .isFalse();
                });
    }

    @Test
    void limitsOutsideTheirRangeFailStartUpNamingTheProperty() {
        app(RedisTopology.STANDALONE, prefix()).withPropertyValues("rmq.max-headers=0").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(messages(context.getStartupFailure())).contains("Invalid rmq.max-headers '0'")
                            .contains("must be between 1 and");
                });
        app(RedisTopology.STANDALONE, prefix()).withPropertyValues("rmq.max-id-size=0B").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(messages(context.getStartupFailure())).contains("Invalid rmq.max-id-size '0B'");
                });
    }

    private static String messages(Throwable failure) {
        StringBuilder messages = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            messages.append(t.getMessage()).append('\n');
        }
        return messages.toString();
    }

    private static int crc32(String text) {
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(text.getBytes(StandardCharsets.UTF_8));
        return (int) crc.getValue();
    }
}
