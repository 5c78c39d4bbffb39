package io.rmq.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqException;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.RmqTimeoutException;
import io.rmq.core.TopicType;
import io.rmq.core.internal.RmqKeys;
import io.rmq.producer.OutgoingMessage;
import io.rmq.reply.RmqReplies;
import io.rmq.reply.RmqReplyFailureException;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Request-reply (issue 47) on the engine: a request sent by one engine is handled by another's listener, whose reply
 * comes back through the requester's inbox; timeouts, late replies, failures sent back, unreadable replies and bad
 * input; the inbox is bounded and deleted with its engine.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class RequestReplyTest extends EngineTestSupport {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private final List<AutoCloseable> closing = new ArrayList<>();

    RequestReplyTest(RedisTopology topology) {
        super(topology);
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private Rmq engine() {
        Rmq engine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix));
        closing.add(engine);
        return engine;
    }

    /** A responder engine whose listener handles {@code topic}'s requests with {@code handler}. */
    private Rmq responder(String topic, Responder handler) {
        Rmq engine = engine();
        engine.defineTopic(topic, TopicType.PRIORITY, 4);
        ListenerContainer container = engine.container(topic, new ConsumerSettings(16, Duration.ofSeconds(5),
                        new RetryPolicy(1, BackoffPolicy.fixed(Duration.ofMillis(50)))), String.class,
                (String body, Delivery delivery) -> handler.handle(engine.replies(), body, delivery),
                ContainerOptions.of("responder-" + topic, 2));
        closing.add(container::stop);
        container.start();
        return engine;
    }

    interface Responder {
        void handle(RmqReplies replies, String body, Delivery delivery) throws Exception;
    }

    private long exists(byte[] key) {
        return raw(c -> c.exists(key));
    }

    @Test
    void aRequestFromOneEngineGetsTheReplyOfAListenerOfAnother() throws Exception {
        List<Map<String, String>> seen = new CopyOnWriteArrayList<>();
        responder("quotes", (replies, body, delivery) -> {
            seen.add(delivery.headers());
            replies.reply(delivery.headers(), new Quote(body, 42)).join();
        });
        Rmq requester = engine();
        requester.defineTopic("quotes", TopicType.PRIORITY, 4);
        CompletableFuture<Quote> reply = requester.replies().request(
                OutgoingMessage.priority("quotes", "AAPL", 5), Quote.class, TIMEOUT, false);
        assertThat(reply.get(30, TimeUnit.SECONDS)).isEqualTo(new Quote("AAPL", 42));

        assertThat(seen).singleElement().satisfies(headers -> {
            assertThat(headers).containsEntry(OutgoingMessage.REPLY_TO_HEADER, requester.replies().inboxId())
                    .containsKey(OutgoingMessage.CORRELATION_ID_HEADER)
                    .containsEntry(OutgoingMessage.REPLY_TIMEOUT_HEADER, "20000")
                    .doesNotContainKey(OutgoingMessage.REPLY_FAILURES_HEADER);
        });
        // many at once, each to its own requester's future
        List<CompletableFuture<Quote>> many = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            many.add(requester.replies().request(OutgoingMessage.priority("quotes", "SYM" + i, 1), Quote.class,
                    TIMEOUT, false));
        }
        for (int i = 0; i < 50; i++) {
            assertThat(many.get(i).get(30, TimeUnit.SECONDS)).isEqualTo(new Quote("SYM" + i, 42));
        }
        // identical requests never merge: each is its own message
        CompletableFuture<Quote> first = requester.replies().request(OutgoingMessage.priority("quotes", "SAME", 1),
                Quote.class, TIMEOUT, false);
        CompletableFuture<Quote> second = requester.replies().request(OutgoingMessage.priority("quotes", "SAME", 1),
                Quote.class, TIMEOUT, false);
        assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo(second.get(30, TimeUnit.SECONDS));
        assertThat(exists(keys(requester).replyInbox(requester.replies().inboxId())))
                .as("every reply was taken").isZero();
    }

    @Test
    void aRequestNobodyAnswersInTimeTimesOutItsLateReplyIsDroppedAndItExpires() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        List<String> handled = new CopyOnWriteArrayList<>();
        responder("slow", (replies, body, delivery) -> {
            handled.add(body);
            release.await(30, TimeUnit.SECONDS);
            replies.reply(delivery.headers(), "late " + body).join();
        });
        Rmq requester = engine();
        requester.defineTopic("slow", TopicType.PRIORITY, 4);
        CompletableFuture<String> reply = requester.replies().request(OutgoingMessage.priority("slow", "s1", 1),
                String.class, Duration.ofSeconds(3), false);
        assertThatThrownBy(() -> reply.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(RmqTimeoutException.class)
                .hasMessageContaining("no reply to request").hasMessageContaining("within PT3S");
        // the late reply is dropped (by the wait still under way, or by the next request's), with a debug line
        ch.qos.logback.classic.Logger replyLog = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                "io.rmq.reply");
        ch.qos.logback.classic.Level level = replyLog.getLevel();
        replyLog.setLevel(ch.qos.logback.classic.Level.DEBUG);
        try (var log = io.rmq.test.LogCapture.of("io.rmq.reply").expecting("dropped a late reply")) {
            release.countDown();
            CompletableFuture<String> next = requester.replies().request(OutgoingMessage.priority("slow", "s2", 1),
                    String.class, TIMEOUT, false);
            assertThat(next.get(30, TimeUnit.SECONDS)).isEqualTo("late s2");
            await().atMost(Duration.ofSeconds(30)).until(() -> !log.messages().isEmpty());
            assertThat(log.messages()).singleElement().asString().contains("its requester no longer waits");
        }
        finally {
            replyLog.setLevel(level);
        }
        assertThat(handled).containsExactly("s1", "s2");
        byte[] inbox = keys(requester).replyInbox(requester.replies().inboxId());
        await().atMost(Duration.ofSeconds(30)).until(() -> exists(inbox) == 0);

        // a reply to a requester that is gone stays no longer than its request's timeout
        byte[] gone = keys(requester).replyInbox("gone-requester");
        assertThat(requester.replies().reply(Map.of(OutgoingMessage.CORRELATION_ID_HEADER, "c-1",
                OutgoingMessage.REPLY_TO_HEADER, "gone-requester", OutgoingMessage.REPLY_TIMEOUT_HEADER, "2000"),
                "for nobody").join()).isTrue();
        assertThat(this.<Long>raw(c -> c.pttl(gone))).as("kept as long as the request's timeout").isBetween(1L, 2000L);
        await().atMost(Duration.ofSeconds(30)).until(() -> exists(gone) == 0);

        // a request nobody took before its timeout expires with it: a listener started later never sees it
        Rmq lonely = engine();
        lonely.defineTopic("nobody", TopicType.PRIORITY, 4);
        assertThatThrownBy(() -> lonely.replies().request(OutgoingMessage.priority("nobody", "n1", 1), String.class,
                Duration.ofMillis(300), false).get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(RmqTimeoutException.class);
        List<String> late = new CopyOnWriteArrayList<>();
        responder("nobody", (replies, body, delivery) -> late.add(body));
        await().atMost(Duration.ofSeconds(30)).until(() -> lonely.admin().stats("nobody").pending() == 0);
        assertThat(late).as("expired with its timeout").isEmpty();
    }

    @Test
    void aRequestWhoseSendIsSlowHasExpiredWhenItsRequesterGivesUp() throws Exception {
        Rmq requester = engine();
        requester.defineTopic("stalled", TopicType.PRIORITY, 4);
        // every master busy for 1.5 s: the request is stored about that long after it was asked for, and expires 300 ms
        // after that
        Duration busy = Duration.ofMillis(1500);
        Duration timeout = Duration.ofMillis(300);
        CompletableFuture<Void> stalls = busyEveryMaster(busy);
        long asked = System.nanoTime();
        CompletableFuture<String> reply = requester.replies().request(OutgoingMessage.priority("stalled", "r1", 1),
                String.class, timeout, false);
        assertThatThrownBy(() -> reply.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(RmqTimeoutException.class);
        long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - asked);
        // the listener comes once its requester gave up (as a paused one that resumes): the request has expired
        List<String> handled = new CopyOnWriteArrayList<>();
        responder("stalled", (replies, body, delivery) -> handled.add(body));
        stalls.join();
        assertThat(waitedMillis).as("the wait counts from the request's storage, not from the call")
                .isGreaterThanOrEqualTo(busy.plus(timeout).toMillis() - 200);
        await().atMost(Duration.ofSeconds(30)).until(() -> requester.admin().stats("stalled").pending() == 0);
        assertThat(handled).as("expired by the time its requester gave up").isEmpty();
    }

    /**
     * Keeps every master busy with a script for {@code busy}, from about now (the scripts are written before this
     * returns); the future completes when all have ended.
     */
    private CompletableFuture<Void> busyEveryMaster(Duration busy) throws InterruptedException {
        byte[] script = ("local s = redis.call('TIME') local from = s[1] * 1000000 + s[2] "
                + "while true do local t = redis.call('TIME') "
                + "if t[1] * 1000000 + t[2] - from >= tonumber(ARGV[1]) then return 1 end end")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[][] args = {Long.toString(busy.toNanos() / 1000).getBytes(java.nio.charset.StandardCharsets.US_ASCII)};
        List<CompletableFuture<Long>> stalls = new ArrayList<>();
        AutoCloseable connection;
        if (client instanceof io.lettuce.core.cluster.RedisClusterClient cluster) {
            var nodes = cluster.connect(io.lettuce.core.codec.ByteArrayCodec.INSTANCE);
            connection = nodes;
            for (var node : cluster.getPartitions()) {
                if (node.is(io.lettuce.core.cluster.models.partitions.RedisClusterNode.NodeFlag.UPSTREAM)) {
                    stalls.add(nodes.getConnection(node.getNodeId()).async().<Long>eval(script,
                            io.lettuce.core.ScriptOutputType.INTEGER, new byte[0][], args).toCompletableFuture());
                }
            }
        }
        else {
            var single = ((io.lettuce.core.RedisClient) client).connect(io.lettuce.core.codec.ByteArrayCodec.INSTANCE);
            connection = single;
            stalls.add(single.async().<Long>eval(script, io.lettuce.core.ScriptOutputType.INTEGER, new byte[0][], args)
                    .toCompletableFuture());
        }
        Thread.sleep(100); // written and started: a script runs as soon as its command is read
        return CompletableFuture.allOf(stalls.toArray(CompletableFuture[]::new)).whenComplete((done, error) -> {
            try {
                connection.close();
            }
            catch (Exception ignored) {
                // the test's outcome does not depend on it
            }
        });
    }

    @Test
    void aFailureComesBackWhenTheRequestAsksForIt() throws Exception {
        responder("fails", (replies, body, delivery) -> {
            IllegalStateException failure = new IllegalStateException("no stock for " + body);
            if (RmqReplies.wantsFailures(delivery.headers())) {
                assertThat(replies.replyFailure(delivery.headers(), failure).join()).isTrue();
                return;
            }
            assertThat(replies.replyFailure(delivery.headers(), failure).join()).as("not asked for").isFalse();
            replies.reply(delivery.headers(), null).join();
        });
        Rmq requester = engine();
        requester.defineTopic("fails", TopicType.PRIORITY, 4);
        CompletableFuture<String> failed = requester.replies().request(OutgoingMessage.priority("fails", "sku-1", 1),
                String.class, TIMEOUT, true);
        assertThatThrownBy(() -> failed.get(30, TimeUnit.SECONDS)).cause().isInstanceOf(RmqReplyFailureException.class)
                .hasMessageContaining("java.lang.IllegalStateException: no stock for sku-1")
                .satisfies(e -> assertThat(((RmqReplyFailureException) e).getFailure())
                        .isEqualTo("java.lang.IllegalStateException: no stock for sku-1"));
        CompletableFuture<String> none = requester.replies().request(OutgoingMessage.priority("fails", "sku-2", 1),
                String.class, TIMEOUT, false);
        assertThat(none.get(30, TimeUnit.SECONDS)).as("a reply without a value").isNull();
    }

    @Test
    void aReplyThatCannotBeReadAsTheReplyTypeFailsTheFuture() {
        responder("text", (replies, body, delivery) -> replies.reply(delivery.headers(), "not a number").join());
        Rmq requester = engine();
        requester.defineTopic("text", TopicType.PRIORITY, 4);
        CompletableFuture<Integer> reply = requester.replies().request(OutgoingMessage.priority("text", "t", 1),
                Integer.class, TIMEOUT, false);
        assertThatThrownBy(() -> reply.get(30, TimeUnit.SECONDS)).cause().isInstanceOf(RmqException.class)
                .hasMessageContaining("cannot be read as java.lang.Integer");
    }

    @Test
    void badRequestsAreRefusedWithNothingSent() {
        Rmq requester = engine();
        requester.defineTopic("bad", TopicType.PRIORITY, 1);
        RmqReplies replies = requester.replies();
        OutgoingMessage request = OutgoingMessage.priority("bad", "b", 1);
        assertThatThrownBy(() -> replies.request(request.withId("mine"), String.class, TIMEOUT, false))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("id")
                .hasMessageContaining("correlation id");
        assertThatThrownBy(() -> replies.request(request, null, TIMEOUT, false))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("replyType");
        assertThatThrownBy(() -> replies.request(request, String.class, Duration.ZERO, false))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("timeout");
        assertThatThrownBy(() -> replies.request(request, Runnable.class, TIMEOUT, false))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("replyType")
                .hasMessageContaining("java.lang.Runnable").hasMessageContaining("cannot be read from a reply");
        assertThat(requester.admin().stats("bad").pending()).as("nothing was sent").isZero();
    }

    @Test
    void closingTheRequesterFailsWhatWaitsAndDeletesItsInbox() throws Exception {
        CountDownLatch handling = new CountDownLatch(1);
        responder("close", (replies, body, delivery) -> {
            handling.countDown();
            replies.reply(delivery.headers(), "done").join();
        });
        Rmq requester = engine();
        requester.defineTopic("close", TopicType.PRIORITY, 4);
        byte[] inbox = keys(requester).replyInbox(requester.replies().inboxId());
        assertThat(requester.replies().request(OutgoingMessage.priority("close", "c0", 1), String.class, TIMEOUT,
                false).get(30, TimeUnit.SECONDS)).isEqualTo("done");
        // a reply that nobody took yet, then a request still waiting when the engine closes
        raw(c -> c.rpush(inbox, "stale-id\u00000x".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        requester.defineTopic("close-idle", TopicType.PRIORITY, 1);
        CompletableFuture<String> waiting = requester.replies().request(
                OutgoingMessage.priority("close-idle", "w", 1), String.class, TIMEOUT, false);
        closing.remove(requester);
        requester.close();
        assertThatThrownBy(() -> waiting.get(30, TimeUnit.SECONDS)).cause().isInstanceOf(RmqException.class)
                .hasMessageContaining("closed");
        assertThat(exists(inbox)).isZero();
    }

    private static RmqKeys keys(Rmq engine) {
        return io.rmq.internal.RmqInternals.redis(engine).keys();
    }

    /** A reply type. */
    record Quote(String symbol, int price) {
    }
}
