package io.rmq.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.rmq.core.RmqTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Request-reply (issue 47) with requester and responder in separate JVMs, each killed (-9) in the middle of a request:
 * <ul>
 * <li>the responder killed while it handles a request: the requester times out cleanly at its timeout, and the
 * request, which expires with it, is not handled again by the responder that takes over;</li>
 * <li>the requester killed while its request is handled: the reply lands in its inbox, which Redis deletes once the
 * request's timeout has passed: nothing piles up.</li>
 * </ul>
 */
class RequestReplyFaultScenariosTest extends FaultSuite {

    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path work;

    private static Map<String, String> responder(RedisNode redis, long handleMillis) {
        return new HashMap<>(Map.of("redis", redis.hostPort(), "concurrency", "2", "batch", "4", "lease-ms", "1000",
                "command-timeout-ms", "1000", "max-idle-ms", "500", "handle-ms", Long.toString(handleMillis),
                "reply", "true", "held", "true"));
    }

    /** Waits until the responder's handler has started on {@code body} (its {@code .held} record says so). */
    private static void awaitHandling(ConsumerProcess responder, String body) throws IOException, InterruptedException {
        Path held = Path.of(responder.record() + ".held");
        long deadline = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < deadline) {
            if (Files.exists(held) && Files.readString(held).lines().anyMatch(l -> l.startsWith("S,")
                    && l.endsWith("," + body))) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("the responder did not start handling " + body + ": " + responder.logTail());
    }

    @Test
    void aResponderKilledMidRequestLeavesTheRequesterATimeoutAndNoSecondHandling() throws Exception {
        try (RedisNode redis = RedisNode.start(work, false);
                FaultRun run = new FaultRun("request-reply, responder killed mid-request", work, sender(redis))) {
            ConsumerProcess first = run.consumer("r0", responder(redis, 10_000));
            // a request's id is its correlation id: the responder records it by that
            long sent = System.currentTimeMillis();
            CompletableFuture<String> reply = run.request("quote-1", Duration.ofSeconds(3));
            String body = "quote-1";
            awaitHandling(first, requestIdOf(first));
            first.kill();
            assertThatThrownBy(() -> reply.get(60, TimeUnit.SECONDS)).hasCauseInstanceOf(RmqTimeoutException.class)
                    .hasMessageContaining("within PT3S");
            long waited = System.currentTimeMillis() - sent;
            assertThat(waited).as("ms until the requester gave up").isBetween(2_900L, 30_000L);

            // the request expired with its timeout: the responder that takes over never hands it to its handler
            ConsumerProcess second = run.consumer("r1", responder(redis, 0));
            long deadline = System.currentTimeMillis() + 60_000;
            while (run.leftInRedis() > 0 && System.currentTimeMillis() < deadline) {
                Thread.sleep(100);
            }
            assertThat(run.leftInRedis()).as("the expired request is gone").isZero();
            Path held = Path.of(second.record() + ".held");
            assertThat(Files.exists(held) ? Files.readString(held) : "").as("handled again").isEmpty();
            assertThat(exists(redis, run.replyInbox(run.inboxId()))).as("no reply was written").isZero();
            run.note("request-reply, responder killed mid-request: requester timed out after " + waited + " ms"
                    + " (timeout 3 s); the expired request was not handled again (" + body + ")");
        }
    }

    @Test
    void aRequesterKilledMidRequestHasItsInboxDeletedWithinItsTimeout() throws Exception {
        try (RedisNode redis = RedisNode.start(work, false);
                FaultRun run = new FaultRun("request-reply, requester killed mid-request", work, sender(redis))) {
            ConsumerProcess responder = run.consumer("r0", responder(redis, 1_000));
            Path out = work.resolve("requester.out");
            List<String> command = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx128m",
                    "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                    RequesterMain.class.getName(), "--redis", redis.hostPort(), "--prefix", run.prefix,
                    "--topic", run.topic, "--slots", Integer.toString(run.slots), "--body", "order-7",
                    "--timeout-ms", "4000"));
            Process requester = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(out.toFile()).start();
            try {
                String inboxId = awaitLine(out, "INBOX ", requester).substring("INBOX ".length()).trim();
                awaitLine(out, "SENT", requester);
                awaitHandling(responder, requestIdOf(responder));
                requester.destroyForcibly();
                requester.waitFor(10, TimeUnit.SECONDS);
                long killedAt = System.currentTimeMillis();

                byte[] inbox = run.replyInbox(inboxId);
                long deadline = System.currentTimeMillis() + 30_000;
                while (exists(redis, inbox) == 0 && System.currentTimeMillis() < deadline) {
                    Thread.sleep(20);
                }
                assertThat(exists(redis, inbox)).as("the reply reached the dead requester's inbox").isEqualTo(1);
                long ttl = pttl(redis, inbox);
                assertThat(ttl).as("kept no longer than the request's timeout").isBetween(1L, 4_000L);
                while (exists(redis, inbox) == 1 && System.currentTimeMillis() < deadline + 30_000) {
                    Thread.sleep(100);
                }
                long goneAfter = System.currentTimeMillis() - killedAt;
                assertThat(exists(redis, inbox)).as("the dead requester's inbox was deleted").isZero();
                assertThat(run.leftInRedis()).as("the request was handled and acked").isZero();
                run.note("request-reply, requester killed mid-request: its inbox (TTL " + ttl + " ms at the reply) was"
                        + " gone " + goneAfter + " ms after the kill (timeout 4 s)");
            }
            finally {
                requester.destroyForcibly();
            }
        }
    }

    /** The id (correlation id) of the one request the responder has started on. */
    private static String requestIdOf(ConsumerProcess responder) throws IOException, InterruptedException {
        Path held = Path.of(responder.record() + ".held");
        long deadline = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < deadline) {
            if (Files.exists(held)) {
                for (String line : Files.readString(held).lines().toList()) {
                    if (line.startsWith("S,")) {
                        return line.substring(line.lastIndexOf(',') + 1);
                    }
                }
            }
            Thread.sleep(20);
        }
        throw new AssertionError("the responder started no request: " + responder.logTail());
    }

    private static String awaitLine(Path out, String prefix, Process process) throws IOException,
            InterruptedException {
        long deadline = System.currentTimeMillis() + 60_000;
        while (System.currentTimeMillis() < deadline) {
            if (Files.exists(out)) {
                for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
                    if (line.startsWith(prefix)) {
                        return line;
                    }
                }
            }
            if (!process.isAlive()) {
                throw new AssertionError("the requester exited: " + Files.readString(out));
            }
            Thread.sleep(20);
        }
        throw new AssertionError("the requester printed no " + prefix);
    }

    private static long exists(RedisNode redis, byte[] key) {
        return call(redis, c -> c.exists(key));
    }

    private static long pttl(RedisNode redis, byte[] key) {
        return call(redis, c -> c.pttl(key));
    }

    private static <T> T call(RedisNode redis,
            java.util.function.Function<io.lettuce.core.api.sync.RedisCommands<byte[], byte[]>, T> action) {
        RedisClient client = RedisClient.create(resources, redis.uri());
        try (StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE)) {
            return action.apply(connection.sync());
        }
        finally {
            RedisNode.shutdown(client);
        }
    }
}
