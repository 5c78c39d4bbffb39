package io.rmq.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.core.RmqTimeoutException;
import io.rmq.producer.OutgoingMessage;
import io.rmq.reply.RmqReplyFailureException;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.messaging.handler.annotation.SendTo;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Request-reply through Spring (issue 47): {@code RmqTemplate.sendAndReceive} in one application, answered by an
 * ordinary {@code @RmqListener} method of another (two contexts, two engines, one Redis: standalone and cluster);
 * failures sent back or timed out; a {@code @SendTo} method's reply goes to the requester; inside a transaction the
 * request waits for the commit.
 */
@ExtendWith(RedisServersExtension.class)
@ParameterizedClass
@EnumSource(RedisTopology.class)
class RequestReplyTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private final RedisTopology topology;
    private final String prefix = "rr-" + UUID.randomUUID();
    private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();

    RequestReplyTest(RedisTopology topology) {
        this.topology = topology;
    }

    @AfterEach
    void close() {
        contexts.forEach(ConfigurableApplicationContext::close);
    }

    private ConfigurableApplicationContext start(Class<?> application, String... more) {
        List<String> args = new ArrayList<>(List.of("--spring.main.web-application-type=none",
                "--spring.main.banner-mode=off", "--rmq.topics.quotes.type=PRIORITY",
                "--rmq.topics.stock.type=FIXED_TIME", "--rmq.topics.audit.type=PRIORITY",
                "--rmq.consumer.max-retries=1", "--rmq.consumer.backoff.initial=50ms"));
        topology.springProperties(prefix).forEach((key, value) -> args.add("--" + key + "=" + value));
        args.addAll(List.of(more));
        ConfigurableApplicationContext context = new SpringApplicationBuilder(application)
                .run(args.toArray(String[]::new));
        contexts.add(context);
        return context;
    }

    @Test
    void aListenerOfAnotherApplicationAnswersTheRequest() throws Exception {
        Responders responders = start(ResponderApplication.class).getBean(Responders.class);
        RmqTemplate template = start(RequesterApplication.class).getBean(RmqTemplate.class);

        assertThat(template.sendAndReceive("quotes", new QuoteRequest("AAPL"), Quote.class, TIMEOUT))
                .isEqualTo(new Quote("AAPL", 190));
        CompletableFuture<Quote> async = template.sendAndReceiveAsync("quotes", new QuoteRequest("MSFT"), Quote.class,
                TIMEOUT);
        assertThat(async.get(30, TimeUnit.SECONDS)).isEqualTo(new Quote("MSFT", 190));
        // a FIXED_TIME topic, and a method that returns nothing: the reply is null, at once
        assertThat(template.sendAndReceive("stock", "sku-9", String.class, TIMEOUT)).isNull();
        assertThat(responders.stock.poll(10, TimeUnit.SECONDS)).isEqualTo("sku-9");
        // a @SendTo method answers the requester; its @SendTo topic gets nothing for a request
        assertThat(template.sendAndReceive("audit", "entry-1", String.class, TIMEOUT)).isEqualTo("audited entry-1");
        template.sendPriority("audit", "entry-2", 0);
        await().atMost(Duration.ofSeconds(30)).until(() -> responders.audited.contains("audited entry-2"));
        assertThat(responders.audited).containsExactly("audited entry-2");
    }

    @Test
    void aFailureComesBackWhenAskedElseTheRequestTimesOutAndIsRetried() {
        Responders responders = start(ResponderApplication.class).getBean(Responders.class);
        RmqTemplate template = start(RequesterApplication.class).getBean(RmqTemplate.class);
        try (LogCapture log = LogCapture.rmq().expecting("unknown symbol")) {
            assertThatThrownBy(() -> template.sendAndReceive(OutgoingMessage.priority("quotes",
                    new QuoteRequest("??"), 1), Quote.class, TIMEOUT, true))
                    .isInstanceOf(RmqReplyFailureException.class)
                    .hasMessageContaining("java.lang.IllegalArgumentException: unknown symbol ??");
            assertThat(responders.failures.get()).as("sent back at once, not retried").isEqualTo(1);

            assertThatThrownBy(() -> template.sendAndReceive("quotes", new QuoteRequest("?!"), Quote.class,
                    Duration.ofSeconds(2))).isInstanceOf(RmqTimeoutException.class)
                    .hasMessageContaining("no reply to request");
            await().atMost(Duration.ofSeconds(30)).until(() -> responders.failures.get() >= 3);
            assertThat(log.warnings()).anySatisfy(line -> assertThat(line).contains("unknown symbol ?!"));
        }
    }

    @Test
    void insideATransactionTheRequestIsSentAfterTheCommit() throws Exception {
        start(ResponderApplication.class);
        ConfigurableApplicationContext requester = start(TransactionalRequesterApplication.class);
        RmqTemplate template = requester.getBean(RmqTemplate.class);
        TransactionTemplate transaction = new TransactionTemplate(
                requester.getBean(DataSourceTransactionManager.class));

        assertThatThrownBy(() -> transaction.executeWithoutResult(status -> template.sendAndReceive("quotes",
                new QuoteRequest("IBM"), Quote.class, TIMEOUT))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("inside a transaction").hasMessageContaining("sendAndReceiveAsync");
        CompletableFuture<Quote> afterCommit = transaction.execute(status -> {
            CompletableFuture<Quote> reply = template.sendAndReceiveAsync("quotes", new QuoteRequest("IBM"),
                    Quote.class, TIMEOUT);
            assertThat(template.getRmq().admin().stats("quotes").pending()).as("held until the commit").isZero();
            return reply;
        });
        assertThat(afterCommit.get(30, TimeUnit.SECONDS)).isEqualTo(new Quote("IBM", 190));
        CompletableFuture<Quote> rolledBack = transaction.execute(status -> {
            status.setRollbackOnly();
            return template.sendAndReceiveAsync("quotes", new QuoteRequest("ORCL"), Quote.class, TIMEOUT);
        });
        assertThatThrownBy(() -> rolledBack.get(30, TimeUnit.SECONDS)).cause()
                .isInstanceOf(RmqSendDiscardedException.class);
        // the immediate template sends at once, transaction or not
        Quote now = transaction.execute(status -> template.immediate().sendAndReceive("quotes",
                new QuoteRequest("SAP"), Quote.class, TIMEOUT));
        assertThat(now).isEqualTo(new Quote("SAP", 190));
    }

    @Test
    void aReplyTypeThatCannotBeReadIsRefusedWithNothingSent() {
        RmqTemplate template = start(RequesterApplication.class).getBean(RmqTemplate.class);
        assertThatThrownBy(() -> template.sendAndReceive("quotes", new QuoteRequest("X"), Map.Entry.class, TIMEOUT))
                .isInstanceOf(io.rmq.core.RmqInvalidArgumentException.class).hasMessageContaining("replyType")
                .hasMessageContaining("cannot be read from a reply");
        assertThat(template.getRmq().admin().stats("quotes").pending()).isZero();
    }

    record QuoteRequest(String symbol) {
    }

    record Quote(String symbol, int price) {
    }

    /** The listeners that answer requests. */
    static class Responders {

        final BlockingQueue<String> stock = new LinkedBlockingQueue<>();
        final List<String> audited = new java.util.concurrent.CopyOnWriteArrayList<>();
        final AtomicInteger failures = new AtomicInteger();

        @RmqListener(topic = "quotes", concurrency = "2")
        public Quote quote(QuoteRequest request) {
            if (request.symbol().startsWith("?")) {
                failures.incrementAndGet();
                throw new IllegalArgumentException("unknown symbol " + request.symbol());
            }
            return new Quote(request.symbol(), 190);
        }

        @RmqListener(topic = "stock")
        public void reserve(String sku) {
            stock.add(sku);
        }

        @RmqListener(topic = "audit")
        @SendTo("audit-log")
        public String audit(String entry) {
            return "audited " + entry;
        }

        @RmqListener(topic = "audit-log", type = "PRIORITY")
        public void auditLog(String line) {
            audited.add(line);
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ResponderApplication {

        @Bean
        Responders responders() {
            return new Responders();
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class RequesterApplication {
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class TransactionalRequesterApplication {

        @Bean(destroyMethod = "shutdown")
        EmbeddedDatabase dataSource() {
            return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
        }

        @Bean
        DataSourceTransactionManager transactionManager(EmbeddedDatabase dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }
}
