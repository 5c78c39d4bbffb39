package io.rmq.benchmarks;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.rmq.Rmq;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.MessageHandler;
import io.rmq.container.ContainerOptions;
import io.rmq.container.RmqListenerContainer;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;

/**
 * RMQ as a benchmark peer (PROTOCOL.md), through its public engine API the way an application uses it: the producer's
 * batch and async sends, and a listener container with a typed payload. W1/W2 use a RANGE_MERGE topic with a 1 ms
 * time range (a plain queue with merging), W3 a FIXED_TIME topic; both 16 slots.
 */
public final class RmqPeer {

    /** W1/W2 payload as a listener declares it. */
    public record Payload(long id, String body) {
    }

    /** W3 payload: carries its due time. */
    public record Timed(long id, long due) {
    }

    static final String QUEUE = "bench";
    static final String DELAYED = "bench-delay";
    static final Duration RANGE = Duration.ofMillis(1);

    public static void main(String[] argv) throws Exception {
        PeerArgs args = PeerArgs.parse(argv);
        RedisClient client = RedisClient.create(RedisURI.create(args.host(), args.port()));
        int exit = 0;
        try (Rmq rmq = Rmq.create(client, Rmq.Options.DEFAULT)) {
            rmq.defineTopic(QUEUE, TopicType.RANGE_MERGE, 16);
            rmq.defineTopic(DELAYED, TopicType.FIXED_TIME, 16);
            String result = run(rmq, args);
            System.out.println("RESULT " + result);
        }
        catch (Exception ex) {
            ex.printStackTrace();
            exit = 1;
        }
        finally {
            client.shutdown();
        }
        System.exit(exit);
    }

    static String run(Rmq rmq, PeerArgs args) throws Exception {
        return switch (args.workload()) {
            case "produce-batch", "fill" -> rate(produceBatch(rmq, args.messages()), args.messages());
            case "produce-single" -> rate(produceSingle(rmq, args.messages()), args.messages());
            case "consume" -> consume(rmq, args);
            case "produce-consume" -> produceConsume(rmq, args);
            case "delay" -> delay(rmq, args);
            case "idle" -> idle(rmq, args);
            default -> throw new IllegalArgumentException("unknown workload " + args.workload());
        };
    }

    /** sendBatch in chunks of 10,000 (validated whole, grouped by slot, multi-member script calls, pipelined). */
    static long produceBatch(Rmq rmq, int n) {
        long start = System.nanoTime();
        List<OutgoingMessage> chunk = new ArrayList<>(10_000);
        List<CompletableFuture<?>> inFlight = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            chunk.add(OutgoingMessage.rangeMerge(QUEUE, new Payload(i, PeerArgs.FILLER), RANGE));
            if (chunk.size() == 10_000 || i == n - 1) {
                inFlight.add(rmq.producer().sendBatchAsync(chunk));
                chunk = new ArrayList<>(10_000);
            }
        }
        CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();
        return System.nanoTime() - start;
    }

    /** One sendAsync per message, all in flight (bounded window), then wait for every acknowledgement. */
    static long produceSingle(Rmq rmq, int n) {
        long start = System.nanoTime();
        List<CompletableFuture<?>> window = new ArrayList<>(5_000);
        for (int i = 0; i < n; i++) {
            window.add(rmq.producer().sendAsync(OutgoingMessage.rangeMerge(QUEUE, new Payload(i, PeerArgs.FILLER), RANGE)));
            if (window.size() == 5_000) {
                CompletableFuture.allOf(window.toArray(CompletableFuture[]::new)).join();
                window.clear();
            }
        }
        CompletableFuture.allOf(window.toArray(CompletableFuture[]::new)).join();
        return System.nanoTime() - start;
    }

    static RmqListenerContainer container(Rmq rmq, String topic, Class<?> type, int concurrency,
            MessageHandler<?> handler) {
        ConsumerSettings settings = new ConsumerSettings(64, Duration.ofSeconds(30), RetryPolicy.DEFAULT);
        return new RmqListenerContainer(rmq.consumer(topic, settings), rmq.wakeUps(), type, handler,
                new ContainerOptions("bench-" + topic, concurrency, Duration.ofSeconds(30), Duration.ofSeconds(10), null));
    }

    static String consume(Rmq rmq, PeerArgs args) throws InterruptedException {
        return timedConsumption(rmq, args, false);
    }

    static String produceConsume(Rmq rmq, PeerArgs args) throws InterruptedException {
        return timedConsumption(rmq, args, true);
    }

    /**
     * Runs a no-op listener until N messages are handled (or the time cap passes): over the pre-filled queue, or
     * while this process sends them one at a time. The clock starts at the container start or the first send.
     */
    static String timedConsumption(Rmq rmq, PeerArgs args, boolean produce) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(args.messages());
        AtomicInteger handled = new AtomicInteger();
        RmqListenerContainer container = container(rmq, QUEUE, Payload.class, args.concurrency(),
                (Payload p, io.rmq.consumer.Delivery d) -> {
                    handled.incrementAndGet();
                    done.countDown();
                });
        long start = System.nanoTime();
        container.start();
        if (produce) {
            Thread.sleep(200);
            start = System.nanoTime();
            produceSingle(rmq, args.messages());
        }
        done.await(args.seconds(), TimeUnit.SECONDS);
        long elapsed = System.nanoTime() - start;
        int count = handled.get();
        container.stop();
        return rate(elapsed, count);
    }

    static String delay(Rmq rmq, PeerArgs args) throws InterruptedException {
        int n = args.messages();
        long[] lateness = new long[n];
        AtomicInteger handled = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(n);
        RmqListenerContainer container = container(rmq, DELAYED, Timed.class, args.concurrency(),
                (Timed t, io.rmq.consumer.Delivery d) -> {
                    int k = handled.getAndIncrement();
                    if (k < n) {
                        lateness[k] = System.currentTimeMillis() - t.due();
                    }
                    done.countDown();
                });
        container.start();
        Thread.sleep(200);
        long base = System.currentTimeMillis() + 1000; // PROTOCOL.md: due times start 1 s ahead
        long spreadMillis = args.seconds() * 1000L;
        List<OutgoingMessage> batch = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long due = base + (spreadMillis * i) / n;
            batch.add(OutgoingMessage.fixedTime(DELAYED, new Timed(i, due), Instant.ofEpochMilli(due)));
        }
        rmq.producer().sendBatch(batch);
        done.await(2L * args.seconds() + 30, TimeUnit.SECONDS);
        container.stop();
        int count = Math.min(n, handled.get());
        long[] got = Arrays.copyOf(lateness, count);
        Arrays.sort(got);
        return String.format(Locale.ROOT, "{\"p50\":%d,\"p99\":%d,\"max\":%d,\"count\":%d}", percentile(got, 50),
                percentile(got, 99), count == 0 ? -1 : got[count - 1], count);
    }

    static String idle(Rmq rmq, PeerArgs args) throws InterruptedException {
        RmqListenerContainer container = container(rmq, DELAYED, Timed.class, args.concurrency(),
                (Timed t, io.rmq.consumer.Delivery d) -> { });
        container.start();
        Thread.sleep(300);
        System.out.println("READY");
        Thread.sleep(args.seconds() * 1000L);
        container.stop();
        return "{\"count\":0}";
    }

    static long percentile(long[] sorted, int p) {
        if (sorted.length == 0) {
            return -1;
        }
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }

    static String rate(long elapsedNanos, long count) {
        double seconds = elapsedNanos / 1e9;
        return String.format(Locale.ROOT, "{\"rate\":%.1f,\"count\":%d}", count / seconds, count);
    }
}
