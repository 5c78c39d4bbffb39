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

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.MessageHandler;
import io.rmq.container.ContainerOptions;
import io.rmq.container.internal.RmqListenerContainer;
import io.rmq.container.internal.ListenerContainers;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.internal.RmqInternals;
import io.rmq.micrometer.observation.TraceSampling;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.RedisClientSettings;
import io.rmq.redis.RmqRedisClient;

/**
 * RMQ as a benchmark peer (PROTOCOL.md), through its public engine API the way an application uses it: the producer's
 * batch and async sends, and a listener container with a typed payload. W1/W2 use a RANGE_MERGE topic with a 1 ms
 * time range (a plain queue with merging), W3 a FIXED_TIME topic; both 16 slots (the W1/W2 topic N slots with {@code --slots N}).
 *
 * <p>{@code --ops metrics,observations}: RMQ's Micrometer meters and/or its observations on, recorded in a
 * SimpleMeterRegistry (observations as timers, no tracer), as an application with Spring Boot Actuator has them.
 *
 * <p>{@code --propagate-context true}: trace context propagation on, as {@code rmq.observation.propagate-context}
 * turns it on: every send call carries a W3C traceparent of its own (random trace and span ids, as a tracer makes
 * them), stored beside each message, and listeners read it back ({@code Delivery.context()}) in every handler call.
 * No tracer runs: this measures what the storage costs (Redis memory, script time, reply size), not a tracer's work.
 * {@code --sampling P} (0 to 1, default 1): a share P of the send calls carries a sampled traceparent (flags
 * {@code 01}), the rest an unsampled one ({@code 00}), which {@link TraceSampling} then leaves out as
 * {@code ObservationInstrumentation} does: what a tracer at sampling probability P hands RMQ (Boot's default: 0.1).
 *
 * <p>{@code --ids true} / {@code --headers 2}: W1/W2 messages sent with an id each / with two user headers (the
 * message model's cost, BENCHMARKS.md "The message model"). {@code --expire-after-ms E}: each sent with
 * {@code expiresAfter} E ms (an hour is long enough never to expire in a run: what storing and checking costs).
 * {@code --dedupe-for-ms D}: each sent with {@code dedupeFor} D ms (every message is new: what keeping, starting and
 * checking the windows costs).
 *
 * <p>{@code --registry true}: the instance registry on at its default heartbeat (5 s), as the Spring layer starts it
 * ({@code rmq.instances.enabled}, on by default): its beats and the busy handlers it keeps for the description.
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
    static final Duration LEASE = Duration.ofSeconds(30);
    /** Messages per batch and per one-at-a-time phase of a W1 warm-up round (PROTOCOL.md). */
    static final int WARMUP_ROUND = 1_000;

    public static void main(String[] argv) throws Exception {
        PeerArgs args = PeerArgs.parse(argv);
        AbstractRedisClient client = client(args);
        int exit = 0;
        try (Rmq rmq = Rmq.create(client, options(args))) {
            // --slots: the scaling workload's slot count per topic (16 everywhere else)
            rmq.defineTopic(QUEUE, TopicType.RANGE_MERGE, args.intOption("slots", 16));
            rmq.defineTopic(DELAYED, TopicType.FIXED_TIME, 16);
            if (Boolean.parseBoolean(args.option("registry", "false"))) {
                // before any listener is made: containers made after it report their handler calls to it
                rmq.instances().start(new io.rmq.instances.InstanceSettings("rmq-bench"));
            }
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

    /**
     * The Lettuce client: of the Redis at {@code --host}/{@code --port}, or with {@code --cluster h:p,h:p,..} of that
     * Redis Cluster, built as the Spring Boot starter builds it ({@link RmqRedisClient#cluster}).
     */
    static AbstractRedisClient client(PeerArgs args) {
        String cluster = args.option("cluster", "");
        if (cluster.isEmpty()) {
            return RedisClient.create(RedisURI.create(args.host(), args.port()));
        }
        List<RedisURI> seeds = new ArrayList<>();
        for (String node : cluster.split(",")) {
            int colon = node.lastIndexOf(':');
            seeds.add(RedisURI.create(node.substring(0, colon), Integer.parseInt(node.substring(colon + 1))));
        }
        return RmqRedisClient.cluster(seeds, null, null, RedisClientSettings.DEFAULT).client();
    }

    /** Whether sends carry a traceparent and handlers read it ({@code --propagate-context true}). */
    static volatile boolean propagateContext;
    /** {@code --sampling P}: the share of send calls whose traceparent is sampled, and therefore stored. */
    static volatile double sampling = 1;
    /** {@code --ids true}: every W1/W2 message is sent with an id of its own (see {@link #message}). */
    static volatile boolean withIds;
    /** {@code --headers 2}: every W1/W2 message carries two user headers (see {@link #message}). */
    static volatile int headers;
    /** {@code --expire-after-ms E}: every W1/W2 message expires E ms after it is stored (0: never). */
    static volatile long expireAfterMillis;
    /** {@code --dedupe-for-ms D}: every W1/W2 message has a deduplication window of D ms (0: none). */
    static volatile long dedupeForMillis;
    /** {@code --probe true}: the W3 measurement also records pop round trips and thread wake-up delays. */
    static volatile boolean probing;
    /**
     * {@code --pop-ahead-ms W} (W3, an experiment on the lateness): messages are stored due W ms before their real due
     * time and the handler holds each until its real due time, which is what a container popping W ms ahead and
     * releasing at the due time would deliver. Use a concurrency above W (about one message is due per ms).
     */
    static volatile long popAheadMillis;
    /**
     * {@code --look-ahead-ms W} (the {@code delay} workload): the container's real look-ahead
     * ({@link ConsumerSettings#lookAhead()}): it pops messages due within W ms and holds each until its due time.
     */
    static volatile long lookAheadMillis;

    static RmqOptions options(PeerArgs args) {
        propagateContext = Boolean.parseBoolean(args.option("propagate-context", "false"));
        sampling = Double.parseDouble(args.option("sampling", "1"));
        if (!(sampling >= 0 && sampling <= 1)) {
            throw new IllegalArgumentException("--sampling " + args.option("sampling", "1") + ": must be from 0 to 1");
        }
        withIds = Boolean.parseBoolean(args.option("ids", "false"));
        headers = args.intOption("headers", 0);
        expireAfterMillis = args.intOption("expire-after-ms", 0);
        dedupeForMillis = args.intOption("dedupe-for-ms", 0);
        probing = Boolean.parseBoolean(args.option("probe", "false"));
        popAheadMillis = args.intOption("pop-ahead-ms", 0);
        lookAheadMillis = args.intOption("look-ahead-ms", 0);
        RmqOptions options = RmqOptions.DEFAULT;
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
        if (Boolean.parseBoolean(args.option("probe", "false")) && args.workload().equals("delay")) {
            parts.add(new PopTimes());
        }
        if (propagateContext) {
            parts.add(new TraceparentPerSend());
            options = options.withPropagateContext(true);
        }
        // --history-flush-ms 0: no history counted or written (the engine's default: every 10 s)
        int historyMillis = args.intOption("history-flush-ms", -1);
        if (historyMillis >= 0) {
            options = options.withHistoryFlushInterval(java.time.Duration.ofMillis(historyMillis));
        }
        return options.withInstrumentation(io.rmq.observe.CompositeInstrumentation.of(parts));
    }

    /**
     * What an observation with propagation on hands the producer: per send call a fresh W3C traceparent
     * ({@code 00-<32 hex trace id>-<16 hex span id>-<flags>}, 55 characters), sampled ({@code 01}) for a share
     * {@link #sampling} of the calls; an unsampled one is left out by the same decision the observation makes.
     */
    static final class TraceparentPerSend implements io.rmq.observe.RmqInstrumentation {

        /** It hands contexts over and uses no timing: the engine need not read clocks for it (a tracer's own do). */
        @Override
        public boolean timed() {
            return false;
        }

        @Override
        public SendScope sendStarted(String topic, int messages) {
            java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
            // formatted as a tracer does, with a table of hex digits: what the tracer costs is not RMQ's cost
            char[] text = new char[55];
            text[0] = '0';
            text[1] = '0';
            text[2] = '-';
            hex(random.nextLong(), text, 3);
            hex(random.nextLong(), text, 19);
            text[35] = '-';
            hex(random.nextLong(), text, 36);
            text[52] = '-';
            text[53] = '0';
            text[54] = random.nextDouble() < sampling ? '1' : '0';
            String traceparent = new String(text);
            java.util.Map<String, String> carrier = java.util.Map.of("traceparent", traceparent);
            java.util.Map<String, String> context = TraceSampling.sampled(carrier) ? carrier : java.util.Map.of();
            return new SendScope() {
                @Override
                public java.util.Map<String, String> context() {
                    return context;
                }
            };
        }

        private static final char[] HEX = "0123456789abcdef".toCharArray();

        /** {@code value} as 16 lower-case hex digits into {@code text} from {@code at}. */
        private static void hex(long value, char[] text, int at) {
            for (int i = 15; i >= 0; i--) {
                text[at + i] = HEX[(int) (value & 15)];
                value >>>= 4;
            }
        }
    }

    /** {@code --probe true} (W3): each measured pop's round trip, sent to reply (µs), to explain the lateness. */
    static final java.util.concurrent.ConcurrentLinkedQueue<Long> popMicros = new java.util.concurrent.ConcurrentLinkedQueue<>();

    static final class PopTimes implements io.rmq.observe.RmqInstrumentation {

        @Override
        public void popped(String listenerId, String topic, int slot, int messages, long nanos) {
            if (topic.equals(DELAYED)) {
                popMicros.add(nanos / 1_000);
            }
        }
    }

    /**
     * {@code --probe true} (W3): how late a thread of this JVM wakes from a 1 ms park while the workload runs (µs past
     * the 1 ms): what every hand-over between threads (poller, Lettuce's event loop, Redis, a worker) may cost on a
     * busy machine.
     */
    static Thread wakeProbe(List<Long> oversleep, CountDownLatch stop) {
        Thread probe = new Thread(() -> {
            while (stop.getCount() > 0) {
                long start = System.nanoTime();
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
                oversleep.add((System.nanoTime() - start - 1_000_000) / 1_000);
            }
        }, "wake-probe");
        probe.setDaemon(true);
        probe.start();
        return probe;
    }

    static String percentiles(String name, java.util.Collection<Long> values) {
        long[] sorted = values.stream().mapToLong(Long::longValue).sorted().toArray();
        return String.format(Locale.ROOT, ",\"%sP50\":%d,\"%sP99\":%d,\"%sMax\":%d", name, percentile(sorted, 50),
                name, percentile(sorted, 99), name, sorted.length == 0 ? -1 : sorted[sorted.length - 1]);
    }

    /** A handler's read of the propagated context (what a process observation does with it). */
    static void readContext(io.rmq.consumer.Delivery delivery) {
        // with sampling below 1 an unsampled send stored nothing: only full sampling promises a context on every delivery
        if (propagateContext && sampling >= 1 && delivery.context().get("traceparent") == null) {
            throw new IllegalStateException("no traceparent stored beside " + delivery);
        }
    }

    static String run(Rmq rmq, PeerArgs args) throws Exception {
        return switch (args.workload()) {
            case "produce-batch", "fill" -> {
                measuring();
                yield rate(produceBatch(rmq, QUEUE, args.messages()), args.messages());
            }
            case "produce-single" -> {
                measuring();
                yield rate(produceSingle(rmq, QUEUE, args.messages()), args.messages());
            }
            case "produce-waited" -> WaitedBatches.measure(WaitedBatches.nodes(args), args.messages(),
                    () -> produceWaited(rmq, QUEUE, args.messages(), args.intOption("batch", 1_000)));
            case "produce-sync" -> WaitedBatches.measure(WaitedBatches.nodes(args), args.messages(),
                    () -> produceSync(rmq, QUEUE, args.messages(), args.intOption("threads", 1)));
            case "consume" -> timedConsumption(rmq, QUEUE, args.messages(), args.seconds(), args.concurrency(), false);
            case "produce-consume" -> timedConsumption(rmq, QUEUE, args.messages(), args.seconds(), args.concurrency(), true);
            case "consume-shared" -> sharedConsumption(rmq, QUEUE, args);
            case "delay" -> delay(rmq, DELAYED, args.messages(), args.seconds(), args.concurrency());
            case "idle" -> idle(rmq, args);
            case "wake-latency" -> wakeLatency(rmq, args.messages(), args.intOption("gap-ms", 100));
            // RMQ only (BenchmarkMain --workload ordered): their own engines, warm-up and topics
            case "ordered-consume" -> OrderedWorkloads.consume(args);
            case "takeover" -> OrderedWorkloads.takeover(args);
            default -> throw new IllegalArgumentException("unknown workload " + args.workload());
        };
    }

    /**
     * The W1/W2 message number {@code i}: a RANGE_MERGE message with the W1 payload, and with {@code --ids true} the
     * id {@code m-<i>}, with {@code --headers 2} the headers tenant=acme and type=OrderPlaced (25 bytes of their own).
     */
    static OutgoingMessage message(String topic, long i) {
        OutgoingMessage message = OutgoingMessage.rangeMerge(topic, new Payload(i, PeerArgs.FILLER), RANGE);
        if (withIds) {
            message = message.withId("m-" + i);
        }
        if (headers > 0) {
            message = message.withHeaders(HEADERS);
        }
        if (expireAfterMillis > 0) {
            message = message.expiresAfter(java.time.Duration.ofMillis(expireAfterMillis));
        }
        if (dedupeForMillis > 0) {
            message = message.dedupeFor(java.time.Duration.ofMillis(dedupeForMillis));
        }
        return message;
    }

    private static final java.util.Map<String, String> HEADERS = java.util.Map.of("tenant", "acme", "type",
            "OrderPlaced");

    /** sendBatch in chunks of 10,000 (validated whole, grouped by slot, multi-member script calls, pipelined). */
    static long produceBatch(Rmq rmq, String topic, int n) {
        long start = System.nanoTime();
        List<OutgoingMessage> chunk = new ArrayList<>(10_000);
        List<CompletableFuture<?>> inFlight = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            chunk.add(message(topic, i));
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
            batch.add(message(topic, i));
            if (batch.size() == batchSize || i == n - 1) {
                rmq.producer().sendBatch(batch);
                batch = new ArrayList<>(batchSize);
            }
        }
        return System.nanoTime() - start;
    }

    /**
     * {@code produce-sync --threads T}: T threads, each calling the synchronous {@code send} (waits for Redis's
     * answer) one message at a time until N are sent between them; concurrent calls coalesce in the producer.
     */
    static long produceSync(Rmq rmq, String topic, int n, int threads) {
        AtomicInteger next = new AtomicInteger();
        List<Thread> senders = new ArrayList<>(threads);
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            Thread sender = new Thread(() -> {
                for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
                    rmq.producer().send(message(topic, i));
                }
            }, "sync-sender-" + t);
            sender.start();
            senders.add(sender);
        }
        for (Thread sender : senders) {
            try {
                sender.join();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
        }
        return System.nanoTime() - start;
    }

    /** One sendAsync per message, all in flight (bounded window), then wait for every acknowledgement. */
    static long produceSingle(Rmq rmq, String topic, int n) {
        long start = System.nanoTime();
        List<CompletableFuture<?>> window = new ArrayList<>(5_000);
        for (int i = 0; i < n; i++) {
            window.add(rmq.producer().sendAsync(message(topic, i)));
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
        return container(rmq, topic, type, concurrency, handler, Duration.ZERO);
    }

    static RmqListenerContainer container(Rmq rmq, String topic, Class<?> type, int concurrency,
            MessageHandler<?> handler, Duration lookAhead) {
        ConsumerSettings settings = new ConsumerSettings(64, LEASE, RetryPolicy.DEFAULT).withLookAhead(lookAhead);
        return ListenerContainers.concurrent(rmq.consumer(topic, settings), RmqInternals.wakeUps(rmq), type, handler,
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
        if (!produce) {
            measuring();
        }
        long start = System.nanoTime();
        long cpuStart = processCpuNanos();
        container.start();
        if (produce) {
            Thread.sleep(200);
            start = System.nanoTime();
            measuring();
            cpuStart = processCpuNanos();
            produceSingle(rmq, topic, n);
        }
        done.await(seconds, TimeUnit.SECONDS);
        long elapsed = System.nanoTime() - start;
        long cpu = processCpuNanos() - cpuStart;
        int count = handled.get();
        container.stop();
        String result = rate(elapsed, count);
        // the process's CPU over the measured phase only (no start-up, no warm-up): what A/B pairs compare
        return result.substring(0, result.length() - 1)
                + String.format(Locale.ROOT, ",\"cpuUsPerMsg\":%.3f}", count == 0 ? 0.0 : cpu / 1e3 / count);
    }

    /** CPU time (user + system) of this whole process so far, in ns; -1 where the JVM does not tell. */
    static long processCpuNanos() {
        return java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.OperatingSystemMXBean os ? os.getProcessCpuTime() : -1;
    }

    /**
     * One of several consumer processes of the same topic ({@code BenchmarkMain --workload scaling}): after the
     * warm-up it prints {@code READY} and waits for {@code GO} on its standard input; then it runs the no-op listener
     * (and with {@code --produce true} sends the N messages one at a time, as {@code produce-consume} does), printing
     * {@code HANDLED <count>} every 50 ms, until {@code STOP} arrives (the orchestrator adds up the processes' counts)
     * or {@code --seconds} pass. The RESULT carries the count and wall-clock times in epoch microseconds: the start
     * (GO, or the first send), the last message handled, so the orchestrator can time all processes together.
     */
    static String sharedConsumption(Rmq rmq, String topic, PeerArgs args) throws Exception {
        boolean produce = Boolean.parseBoolean(args.option("produce", "false"));
        AtomicInteger handled = new AtomicInteger();
        java.util.concurrent.atomic.AtomicLong last = new java.util.concurrent.atomic.AtomicLong();
        RmqListenerContainer container = container(rmq, topic, Payload.class, args.concurrency(),
                sharedHandler(handled, last));
        java.io.BufferedReader stdin = new java.io.BufferedReader(
                new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
        System.out.println("READY");
        System.out.flush();
        awaitLine(stdin, "GO");
        long start = epochMicros();
        container.start();
        CountDownLatch stop = new CountDownLatch(1);
        Thread stopper = new Thread(() -> {
            try {
                awaitLine(stdin, "STOP");
            }
            catch (java.io.IOException ex) {
                // the orchestrator went away: stop as well
            }
            stop.countDown();
        }, "stop-reader");
        stopper.setDaemon(true);
        stopper.start();
        Thread progress = new Thread(() -> {
            while (stop.getCount() > 0) {
                System.out.println("HANDLED " + handled.get());
                System.out.flush();
                try {
                    stop.await(50, TimeUnit.MILLISECONDS);
                }
                catch (InterruptedException ex) {
                    return;
                }
            }
        }, "progress");
        progress.setDaemon(true);
        progress.start();
        if (produce) {
            Thread.sleep(200);
            start = epochMicros();
            produceSingle(rmq, topic, args.messages());
        }
        stop.await(args.seconds(), TimeUnit.SECONDS);
        int count = handled.get();
        long lastHandled = last.get();
        container.stop();
        return String.format(Locale.ROOT, "{\"count\":%d,\"start\":%d,\"last\":%d}", count, start, lastHandled);
    }

    /**
     * The scaling workload's listener, made in one place: its warm-up ({@link #sharedWarmUp}) runs the same handler
     * class as the measured container, so the JIT's type profile at GO is the measured one's (a different lambda
     * made the handler call megamorphic and C2 recompile it after GO).
     */
    static MessageHandler<Payload> sharedHandler(AtomicInteger handled, java.util.concurrent.atomic.AtomicLong last) {
        return (Payload p, io.rmq.consumer.Delivery d) -> {
            readContext(d);
            handled.incrementAndGet();
            last.set(epochMicros());
        };
    }

    /** Total time the JIT has spent compiling in this JVM so far, in ms (wall time of compiles); -1 where unknown. */
    static long compileMillis() {
        var jit = java.lang.management.ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
    }

    private static void awaitLine(java.io.BufferedReader in, String expected) throws java.io.IOException {
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().equals(expected)) {
                return;
            }
        }
        throw new java.io.IOException("standard input closed before " + expected);
    }

    static long epochMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    static String delay(Rmq rmq, String topic, int n, int seconds, int concurrency) throws InterruptedException {
        long[] lateness = new long[n];
        // where the lateness comes from: due -> the pop took it (Redis clock: the lease deadline minus the lease) ->
        // the handler started (both clocks are this machine's)
        long[] popLateness = new long[n];
        long[] popToHandler = new long[n];
        AtomicInteger handled = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(n);
        RmqListenerContainer container = container(rmq, topic, Timed.class, concurrency,
                (Timed t, io.rmq.consumer.Delivery d) -> {
                    long now = System.currentTimeMillis();
                    long popped = d.leaseDeadline() - LEASE.toMillis();
                    if (popAheadMillis > 0 && now < t.due()) {
                        // --pop-ahead-ms: the message was stored due that much earlier; hold it until its real due
                        // time, as a container that pops ahead would (one timed wake instead of the whole round trip)
                        java.util.concurrent.locks.LockSupport.parkNanos(
                                TimeUnit.MILLISECONDS.toNanos(t.due() - now));
                        now = System.currentTimeMillis();
                    }
                    readContext(d);
                    int k = handled.getAndIncrement();
                    if (k < n) {
                        lateness[k] = now - t.due();
                        popLateness[k] = popped - t.due();
                        popToHandler[k] = now - popped;
                    }
                    done.countDown();
                }, Duration.ofMillis(lookAheadMillis));
        long gcBefore = gcMillis();
        boolean probe = probing && topic.equals(DELAYED);
        List<Long> oversleep = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch stopProbe = new CountDownLatch(1);
        if (probe) {
            popMicros.clear();
            wakeProbe(oversleep, stopProbe);
        }
        container.start();
        Thread.sleep(200);
        if (topic.equals(DELAYED)) {
            measuring(); // not in the warm-up's rounds
        }
        long base = System.currentTimeMillis() + 1000; // PROTOCOL.md: due times start 1 s ahead
        long spreadMillis = seconds * 1000L;
        List<OutgoingMessage> batch = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long due = base + (spreadMillis * i) / n;
            batch.add(OutgoingMessage.fixedTime(topic, new Timed(i, due), Instant.ofEpochMilli(due - popAheadMillis)));
        }
        rmq.producer().sendBatch(batch);
        done.await(2L * seconds + 30, TimeUnit.SECONDS);
        stopProbe.countDown();
        container.stop();
        int count = Math.min(n, handled.get());
        long[] got = Arrays.copyOf(lateness, count);
        Arrays.sort(got);
        long[] pop = Arrays.copyOf(popLateness, count);
        Arrays.sort(pop);
        long[] hand = Arrays.copyOf(popToHandler, count);
        Arrays.sort(hand);
        return String.format(Locale.ROOT, "{\"p50\":%d,\"p99\":%d,\"max\":%d,\"count\":%d,\"popP50\":%d,"
                + "\"popP99\":%d,\"popMax\":%d,\"handlerP50\":%d,\"handlerP99\":%d,\"handlerMax\":%d,\"gcMillis\":%d}",
                percentile(got, 50), percentile(got, 99), count == 0 ? -1 : got[count - 1], count, percentile(pop, 50),
                percentile(pop, 99), count == 0 ? -1 : pop[count - 1], percentile(hand, 50), percentile(hand, 99),
                count == 0 ? -1 : hand[count - 1], gcMillis() - gcBefore).replaceFirst("}$",
                probe ? percentiles("popRoundTripMicros", popMicros) + percentiles("wakeOversleepMicros", oversleep) + "}"
                        : "}");
    }

    /** Time this JVM spent in garbage collections so far (ms, all collectors). */
    static long gcMillis() {
        long total = 0;
        for (var gc : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            total += Math.max(0, gc.getCollectionTime());
        }
        return total;
    }

    /**
     * The warm-up phase of PROTOCOL.md: for {@code --warmup-seconds}, the same operations as the workload on the
     * warm-up topics (for W1 a listener running while batches and single sends go in; for W3 short delay runs), then
     * their keys are deleted. Nothing here is measured; it only lets the JIT compile the paths the measurement uses.
     */
    static void warmUp(Rmq rmq, AbstractRedisClient client, PeerArgs args) throws InterruptedException {
        if (args.warmupSeconds() <= 0 || List.of("fill", "idle", "ordered-consume", "takeover").contains(args.workload())) {
            return;
        }
        if (args.workload().equals("consume-shared")) {
            sharedWarmUp(rmq, client, args);
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
            boolean sync = args.workload().equals("produce-sync");
            int batchSize = args.intOption("batch", 1_000);
            while (System.nanoTime() < deadline) {
                if (waited) {
                    // the measured path: waited batches of the measured size (at least one per round)
                    produceWaited(rmq, WARM_QUEUE, Math.max(WARMUP_ROUND, batchSize), batchSize);
                }
                if (sync) {
                    // the measured path: synchronous sends from the measured number of threads
                    produceSync(rmq, WARM_QUEUE, WARMUP_ROUND / 4, args.intOption("threads", 1));
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
        deleteWarmUpKeys(rmq, client, rmq.options().keyPrefix() + ":{bench*-warmup:*", WARM_QUEUE, WARM_DELAYED);
        System.err.println("rmq-peer: warmed up in " + rounds + " round(s)");
    }

    /** Messages per round of the scaling workload's warm-up: enough for full 64-message pops of every slot. */
    static final int SHARED_WARMUP_BACKLOG = 20_000;

    /**
     * The scaling workload's warm-up ({@code consume-shared}): the measured shape, so that the JIT has compiled what
     * GO runs before GO. For {@code --warmup-seconds}, rounds of a backlog of {@link #SHARED_WARMUP_BACKLOG} messages
     * consumed by a container with the measured listener class ({@link #sharedHandler}), plus one-at-a-time sends
     * when this process sends in the measured phase ({@code --produce true}); then it waits until the JIT has gone
     * quiet (under 25 ms of compiling in a second; at most {@code --jit-quiet-seconds}, default 30). Each process
     * warms up on a topic of its own, so the processes' warm-ups do not take each other's messages. Why (issue 32,
     * measured): after the trickle warm-up of the other workloads, each consumer JVM compiled ~350 methods with C2
     * after GO (3–5 s of a core), paid once per JVM, which read as CPU per message growing with the number of JVMs.
     */
    static void sharedWarmUp(Rmq rmq, AbstractRedisClient client, PeerArgs args) throws InterruptedException {
        String topic = sharedWarmUpTopic(ProcessHandle.current().pid(),
                java.util.concurrent.ThreadLocalRandom.current().nextInt(1 << 20));
        rmq.defineTopic(topic, TopicType.RANGE_MERGE, args.intOption("slots", 16)); // the measured topic's slots
        boolean produce = Boolean.parseBoolean(args.option("produce", "false"));
        AtomicInteger handled = new AtomicInteger();
        RmqListenerContainer container = container(rmq, topic, Payload.class, args.concurrency(),
                sharedHandler(handled, new java.util.concurrent.atomic.AtomicLong()));
        long started = System.nanoTime();
        long deadline = started + TimeUnit.SECONDS.toNanos(args.warmupSeconds());
        int rounds = 0;
        container.start();
        try {
            while (System.nanoTime() < deadline) {
                int before = handled.get();
                // the same bodies every round: the last round's were consumed, so none merges with a waiting one
                produceBatch(rmq, topic, SHARED_WARMUP_BACKLOG);
                if (produce) {
                    produceSingle(rmq, topic, WARMUP_ROUND);
                }
                long roundEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (handled.get() - before < SHARED_WARMUP_BACKLOG && System.nanoTime() < roundEnd) {
                    Thread.sleep(5);
                }
                rounds++;
                if (handled.get() - before < SHARED_WARMUP_BACKLOG) {
                    break; // a round not consumed in 30 s: the next one's bodies would merge with it and never add up
                }
            }
        }
        finally {
            container.stop();
        }
        long quietFrom = System.nanoTime();
        long quietDeadline = quietFrom + TimeUnit.SECONDS.toNanos(args.intOption("jit-quiet-seconds", 30));
        long compiled = compileMillis();
        while (compiled >= 0 && System.nanoTime() < quietDeadline) {
            Thread.sleep(1000);
            long now = compileMillis();
            if (now - compiled < 25) {
                break;
            }
            compiled = now;
        }
        deleteWarmUpKeys(rmq, client, sharedWarmUpKeys(rmq.options().keyPrefix(), topic), topic);
        System.err.printf(Locale.ROOT, "rmq-peer: warmed up in %d round(s) of %,d messages, %.1f s; the JIT quiet after"
                + " %.1f s more (%,d ms of compiling so far)%n", rounds, SHARED_WARMUP_BACKLOG,
                (quietFrom - started) / 1e9, (System.nanoTime() - quietFrom) / 1e9, compileMillis());
    }

    /**
     * A scaling consumer's own warm-up topic: by pid and a random part (processes in separate PID namespaces may
     * share a pid).
     */
    static String sharedWarmUpTopic(long pid, int random) {
        return "bench-" + pid + "-" + Integer.toString(random, 36) + "-warmup";
    }

    /** The KEYS pattern of every key of that topic ({@code {topic:slot}...} and {@code {topic}:...}), and no other's. */
    static String sharedWarmUpKeys(String prefix, String topic) {
        return prefix + ":{" + topic + "[:}]*";
    }

    /** Deletes the warm-up's keys ({@code pattern}, KEYS on every master) and their topics' definitions. */
    private static void deleteWarmUpKeys(Rmq rmq, AbstractRedisClient client, String pattern, String... warmTopics) {
        String topics = rmq.options().keyPrefix() + ":topics";
        if (client instanceof RedisClusterClient cluster) {
            try (var connection = cluster.connect()) {
                var redis = connection.sync(); // KEYS on every master, DEL split by slot
                var keys = redis.keys(pattern);
                if (!keys.isEmpty()) {
                    redis.del(keys.toArray(String[]::new));
                }
                redis.hdel(topics, warmTopics);
            }
        }
        else {
            try (var connection = ((RedisClient) client).connect()) {
                var redis = connection.sync();
                var keys = redis.keys(pattern);
                if (!keys.isEmpty()) {
                    redis.del(keys.toArray(String[]::new));
                }
                redis.hdel(topics, warmTopics);
            }
        }
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

    /**
     * {@code wake-latency}: how soon an idle listener handles a message sent to it. N times, after a gap of
     * {@code --gap-ms} with nothing to do (the poller asleep until its next check), one FIXED_TIME message due at
     * once is sent; latency = the handler's start minus the moment before the send (this process's clock: the send's
     * own round trip included). p50 / p99 / max in ms (fractions kept), after 100 unmeasured probes 10 ms apart.
     */
    static String wakeLatency(Rmq rmq, int n, int gapMillis) throws InterruptedException {
        long[] latency = new long[n];
        java.util.concurrent.atomic.AtomicLong sentAt = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.Semaphore handled = new java.util.concurrent.Semaphore(0);
        AtomicInteger index = new AtomicInteger();
        RmqListenerContainer container = container(rmq, DELAYED, Timed.class, 8,
                (Timed t, io.rmq.consumer.Delivery d) -> {
                    latency[index.getAndIncrement()] = System.nanoTime() - sentAt.get();
                    handled.release();
                });
        container.start();
        Thread.sleep(1_000);
        // the same probes, not measured, until the JIT has compiled the path (the other workloads warm up too)
        int warmup = Math.min(n, 100);
        for (int i = 0; i < warmup; i++) {
            Thread.sleep(10);
            rmq.producer().send(OutgoingMessage.fixedTime(DELAYED, new Timed(-1 - i, System.currentTimeMillis()),
                    java.time.Instant.now()));
            handled.tryAcquire(10, TimeUnit.SECONDS);
        }
        index.set(0);
        int done = 0;
        for (int i = 0; i < n; i++) {
            Thread.sleep(gapMillis);
            sentAt.set(System.nanoTime());
            rmq.producer().send(OutgoingMessage.fixedTime(DELAYED, new Timed(i, System.currentTimeMillis()),
                    java.time.Instant.now()));
            if (!handled.tryAcquire(10, TimeUnit.SECONDS)) {
                break;
            }
            done++;
        }
        container.stop();
        long[] sorted = Arrays.copyOf(latency, done);
        Arrays.sort(sorted);
        return String.format(Locale.ROOT, "{\"count\":%d,\"p50\":%.2f,\"p99\":%.2f,\"max\":%.2f}", done,
                percentile(sorted, 50) / 1e6, percentile(sorted, 99) / 1e6, done == 0 ? -1 : sorted[done - 1] / 1e6);
    }

    static long percentile(long[] sorted, int p) {
        if (sorted.length == 0) {
            return -1;
        }
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }

    /**
     * Marks the start of the measured phase (PROTOCOL.md {@code MEASURING}): the orchestrator reads Redis's CPU and
     * the machine's load from here to the RESULT line. Printed once per run, after the warm-up.
     */
    static void measuring() {
        System.out.println("MEASURING");
        System.out.flush();
    }

    static String rate(long elapsedNanos, long count) {
        double seconds = elapsedNanos / 1e9;
        return String.format(Locale.ROOT, "{\"rate\":%.1f,\"count\":%d}", count / seconds, count);
    }
}
