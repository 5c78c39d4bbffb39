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
 *
 * <p>{@code --ops metrics,observations}: RMQ's Micrometer meters and/or its observations on, recorded in a
 * SimpleMeterRegistry (observations as timers, no tracer), as an application with Spring Boot Actuator has them.
 *
 * <p>{@code --propagate-context true}: trace context propagation on, as {@code rmq.observation.propagate-context}
 * turns it on: every send call carries a W3C traceparent of its own (random trace and span ids, as a tracer makes
 * them), stored beside each message, and listeners read it back ({@code Delivery.context()}) in every handler call.
 * No tracer runs: this measures what the storage costs (Redis memory, script time, reply size), not a tracer's work.
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
    /** Warm-up topics (PROTOCOL.md): same types, own keys, deleted before the measured phase. */
    static final String WARM_QUEUE = "bench-warmup";
    static final String WARM_DELAYED = "bench-delay-warmup";
    static final Duration RANGE = Duration.ofMillis(1);
    /** Messages per batch and per one-at-a-time phase of a W1 warm-up round (PROTOCOL.md). */
    static final int WARMUP_ROUND = 1_000;

    public static void main(String[] argv) throws Exception {
        PeerArgs args = PeerArgs.parse(argv);
        RedisClient client = RedisClient.create(RedisURI.create(args.host(), args.port()));
        int exit = 0;
        try (Rmq rmq = Rmq.create(client, options(args))) {
            rmq.defineTopic(QUEUE, TopicType.RANGE_MERGE, 16);
            rmq.defineTopic(DELAYED, TopicType.FIXED_TIME, 16);
            warmUp(rmq, client, args);
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

    /** Whether sends carry a traceparent and handlers read it ({@code --propagate-context true}). */
    static volatile boolean propagateContext;

    static Rmq.Options options(PeerArgs args) {
        propagateContext = Boolean.parseBoolean(args.option("propagate-context", "false"));
        Rmq.Options options = Rmq.Options.DEFAULT;
        List<io.rmq.observe.RmqInstrumentation> parts = new ArrayList<>();
        List<String> ops = List.of(args.option("ops", "").split(","));
        if (ops.contains("metrics") || ops.contains("observations")) {
            // as Spring Boot Actuator sets it up without an exporter: a SimpleMeterRegistry, observations recorded as
            // timers in it (DefaultMeterObservationHandler), no tracer
            io.micrometer.core.instrument.MeterRegistry meters = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
            if (ops.contains("metrics")) {
                parts.add(new io.rmq.micrometer.MicrometerInstrumentation(meters));
            }
            if (ops.contains("observations")) {
                io.micrometer.observation.ObservationRegistry observations = io.micrometer.observation.ObservationRegistry.create();
                observations.observationConfig().observationHandler(
                        new io.micrometer.core.instrument.observation.DefaultMeterObservationHandler(meters));
                parts.add(new io.rmq.micrometer.observation.ObservationInstrumentation(observations));
            }
        }
        if (propagateContext) {
            parts.add(new TraceparentPerSend());
            options = options.withPropagateContext(true);
        }
        return options.withInstrumentation(io.rmq.observe.RmqInstrumentation.composite(parts));
    }

    /**
     * What an observation with propagation on hands the producer: per send call a fresh W3C traceparent
     * ({@code 00-<32 hex trace id>-<16 hex span id>-01}, 55 characters).
     */
    static final class TraceparentPerSend implements io.rmq.observe.RmqInstrumentation {

        @Override
        public SendScope sendStarted(String topic, int messages) {
            java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
            String traceparent = String.format(Locale.ROOT, "00-%016x%016x-%016x-01", random.nextLong(),
                    random.nextLong(), random.nextLong());
            java.util.Map<String, String> context = java.util.Map.of("traceparent", traceparent);
            return new SendScope() {
                @Override
                public java.util.Map<String, String> context() {
                    return context;
                }
            };
        }
    }

    /** A handler's read of the propagated context (what a process observation does with it). */
    static void readContext(io.rmq.consumer.Delivery delivery) {
        if (propagateContext && delivery.context().get("traceparent") == null) {
            throw new IllegalStateException("no traceparent stored beside " + delivery);
        }
    }

    static String run(Rmq rmq, PeerArgs args) throws Exception {
        return switch (args.workload()) {
            case "produce-batch", "fill" -> rate(produceBatch(rmq, QUEUE, args.messages()), args.messages());
            case "produce-single" -> rate(produceSingle(rmq, QUEUE, args.messages()), args.messages());
            case "produce-waited" -> WaitedBatches.measure(args.host(), args.port(), args.messages(),
                    () -> produceWaited(rmq, QUEUE, args.messages(), args.intOption("batch", 1_000)));
            case "consume" -> timedConsumption(rmq, QUEUE, args.messages(), args.seconds(), args.concurrency(), false);
            case "produce-consume" -> timedConsumption(rmq, QUEUE, args.messages(), args.seconds(), args.concurrency(), true);
            case "delay" -> delay(rmq, DELAYED, args.messages(), args.seconds(), args.concurrency());
            case "idle" -> idle(rmq, args);
            // RMQ only (BenchmarkMain --workload ordered): their own engines, warm-up and topics
            case "ordered-consume" -> OrderedWorkloads.consume(args);
            case "takeover" -> OrderedWorkloads.takeover(args);
            default -> throw new IllegalArgumentException("unknown workload " + args.workload());
        };
    }

    /** sendBatch in chunks of 10,000 (validated whole, grouped by slot, multi-member script calls, pipelined). */
    static long produceBatch(Rmq rmq, String topic, int n) {
        long start = System.nanoTime();
        List<OutgoingMessage> chunk = new ArrayList<>(10_000);
        List<CompletableFuture<?>> inFlight = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            chunk.add(OutgoingMessage.rangeMerge(topic, new Payload(i, PeerArgs.FILLER), RANGE));
            if (chunk.size() == 10_000 || i == n - 1) {
                inFlight.add(rmq.producer().sendBatchAsync(chunk));
                chunk = new ArrayList<>(10_000);
            }
        }
        CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();
        return System.nanoTime() - start;
    }

    /**
     * {@code produce-waited --batch N}: what a user who sends in batches writes — {@code sendBatch} of N messages,
     * each waited for before the next is built (no batch in flight while the next is encoded).
     */
    static long produceWaited(Rmq rmq, String topic, int n, int batchSize) {
        long start = System.nanoTime();
        List<OutgoingMessage> batch = new ArrayList<>(batchSize);
        for (int i = 0; i < n; i++) {
            batch.add(OutgoingMessage.rangeMerge(topic, new Payload(i, PeerArgs.FILLER), RANGE));
            if (batch.size() == batchSize || i == n - 1) {
                rmq.producer().sendBatch(batch);
                batch = new ArrayList<>(batchSize);
            }
        }
        return System.nanoTime() - start;
    }

    /** One sendAsync per message, all in flight (bounded window), then wait for every acknowledgement. */
    static long produceSingle(Rmq rmq, String topic, int n) {
        long start = System.nanoTime();
        List<CompletableFuture<?>> window = new ArrayList<>(5_000);
        for (int i = 0; i < n; i++) {
            window.add(rmq.producer().sendAsync(OutgoingMessage.rangeMerge(topic, new Payload(i, PeerArgs.FILLER), RANGE)));
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

    /**
     * Runs a no-op listener until N messages are handled (or the time cap passes): over the pre-filled queue, or
     * while this process sends them one at a time. The clock starts at the container start or the first send.
     */
    static String timedConsumption(Rmq rmq, String topic, int n, int seconds, int concurrency, boolean produce)
            throws InterruptedException {
        CountDownLatch done = new CountDownLatch(n);
        AtomicInteger handled = new AtomicInteger();
        RmqListenerContainer container = container(rmq, topic, Payload.class, concurrency,
                (Payload p, io.rmq.consumer.Delivery d) -> {
                    readContext(d);
                    handled.incrementAndGet();
                    done.countDown();
                });
        long start = System.nanoTime();
        container.start();
        if (produce) {
            Thread.sleep(200);
            start = System.nanoTime();
            produceSingle(rmq, topic, n);
        }
        done.await(seconds, TimeUnit.SECONDS);
        long elapsed = System.nanoTime() - start;
        int count = handled.get();
        container.stop();
        return rate(elapsed, count);
    }

    static String delay(Rmq rmq, String topic, int n, int seconds, int concurrency) throws InterruptedException {
        long[] lateness = new long[n];
        AtomicInteger handled = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(n);
        RmqListenerContainer container = container(rmq, topic, Timed.class, concurrency,
                (Timed t, io.rmq.consumer.Delivery d) -> {
                    readContext(d);
                    int k = handled.getAndIncrement();
                    if (k < n) {
                        lateness[k] = System.currentTimeMillis() - t.due();
                    }
                    done.countDown();
                });
        container.start();
        Thread.sleep(200);
        long base = System.currentTimeMillis() + 1000; // PROTOCOL.md: due times start 1 s ahead
        long spreadMillis = seconds * 1000L;
        List<OutgoingMessage> batch = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long due = base + (spreadMillis * i) / n;
            batch.add(OutgoingMessage.fixedTime(topic, new Timed(i, due), Instant.ofEpochMilli(due)));
        }
        rmq.producer().sendBatch(batch);
        done.await(2L * seconds + 30, TimeUnit.SECONDS);
        container.stop();
        int count = Math.min(n, handled.get());
        long[] got = Arrays.copyOf(lateness, count);
        Arrays.sort(got);
        return String.format(Locale.ROOT, "{\"p50\":%d,\"p99\":%d,\"max\":%d,\"count\":%d}", percentile(got, 50),
                percentile(got, 99), count == 0 ? -1 : got[count - 1], count);
    }

    /**
     * The warm-up phase of PROTOCOL.md: for {@code --warmup-seconds}, the same operations as the workload on the
     * warm-up topics (for W1 a listener running while batches and single sends go in; for W3 short delay runs), then
     * their keys are deleted. Nothing here is measured; it only lets the JIT compile the paths the measurement uses.
     */
    static void warmUp(Rmq rmq, RedisClient client, PeerArgs args) throws InterruptedException {
        if (args.warmupSeconds() <= 0 || List.of("fill", "idle", "ordered-consume", "takeover").contains(args.workload())) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(args.warmupSeconds());
        int rounds = 0;
        if (args.workload().equals("delay")) {
            rmq.defineTopic(WARM_DELAYED, TopicType.FIXED_TIME, 16);
            while (System.nanoTime() < deadline) {
                delay(rmq, WARM_DELAYED, 1_000, 1, args.concurrency());
                rounds++;
            }
        }
        else {
            rmq.defineTopic(WARM_QUEUE, TopicType.RANGE_MERGE, 16);
            AtomicInteger handled = new AtomicInteger();
            RmqListenerContainer container = container(rmq, WARM_QUEUE, Payload.class, args.concurrency(),
                    (Payload p, io.rmq.consumer.Delivery d) -> handled.incrementAndGet());
            container.start();
            boolean waited = args.workload().equals("produce-waited");
            int batchSize = args.intOption("batch", 1_000);
            while (System.nanoTime() < deadline) {
                if (waited) {
                    // the measured path: waited batches of the measured size (at least one per round)
                    produceWaited(rmq, WARM_QUEUE, Math.max(WARMUP_ROUND, batchSize), batchSize);
                }
                produceBatch(rmq, WARM_QUEUE, WARMUP_ROUND);
                produceSingle(rmq, WARM_QUEUE, WARMUP_ROUND);
                rounds++;
            }
            // the single sends repeat the batch's bodies (ids 0..round-1), so most merge: wait for one round's worth
            while (handled.get() < rounds * WARMUP_ROUND && System.nanoTime() < deadline + TimeUnit.SECONDS.toNanos(2)) {
                Thread.sleep(10);
            }
            container.stop();
        }
        try (var connection = client.connect()) {
            var redis = connection.sync();
            var keys = redis.keys(rmq.options().keyPrefix() + ":{bench*-warmup:*");
            if (!keys.isEmpty()) {
                redis.del(keys.toArray(String[]::new));
            }
            redis.hdel(rmq.options().keyPrefix() + ":topics", WARM_QUEUE, WARM_DELAYED);
        }
        System.err.println("rmq-peer: warmed up in " + rounds + " round(s)");
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
