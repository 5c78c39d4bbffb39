package io.rmq.benchmarks.peers.rqueue;

import com.github.sonus21.rqueue.config.RqueueConfig;
import com.github.sonus21.rqueue.converter.RqueueRedisSerializer;
import com.github.sonus21.rqueue.core.ReactiveRqueueMessageEnqueuer;
import com.github.sonus21.rqueue.core.RqueueMessageEnqueuer;
import com.github.sonus21.rqueue.core.support.RqueueMessageUtils;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Rqueue benchmark peer (see rmq-benchmarks/PROTOCOL.md):
 *
 * <pre>
 * java -jar rqueue-peer.jar &lt;workload&gt; --host H --port P [--messages N] [--concurrency C] [--seconds S]
 *     [--warmup-seconds W] [--tuned]
 * </pre>
 *
 * Everything runs with Rqueue's defaults; only {@code --tuned} (off by default, not used by the orchestrator)
 * changes the listener container's poll interval / back-off. Prints one {@code RESULT {...}} line (and
 * {@code READY} for idle); everything else is free-form log.
 *
 * <p>{@code --warmup-seconds W} (default 0 = none): before the measured phase, {@link #warmUp} runs the same code
 * paths for W seconds on the separate queue {@value #WARMUP_QUEUE}, in a Spring context of its own that is closed
 * (and whose keys are deleted) before the measured context starts. It only lets HotSpot's JIT compile those paths
 * first; nothing of it is measured (PROTOCOL.md).
 */
@SpringBootApplication
public class RqueuePeer {

    /** Queue name shared by every process (produce-batch fills it, a later consume process drains it). */
    static final String QUEUE = "bench";
    /** The warm-up's own queue (own keys, deleted before the measured phase). */
    static final String WARMUP_QUEUE = QUEUE + "-warmup";
    /** Workloads that get a warm-up phase when --warmup-seconds > 0 (never fill and idle). */
    private static final Set<String> WARMUP_WORKLOADS =
            Set.of("produce-batch", "produce-single", "consume", "produce-consume", "delay");
    /** Messages per synchronous and per reactive phase of a W1 warm-up round. */
    private static final int WARMUP_ROUND = 1_000;
    /** Delayed messages per delay warm-up round, due uniformly over the next WARMUP_DELAY_SPAN_MS. */
    private static final int WARMUP_DELAY_ROUND = 1_000;
    private static final long WARMUP_DELAY_SPAN_MS = 1_000;
    /** The producing loops check their deadline every this many messages. */
    private static final int DEADLINE_CHECK = 1_000;
    private static final long NO_DEADLINE = Long.MAX_VALUE;

    private record Args(String workload, String host, int port, Integer messages, int concurrency, Integer seconds,
                        int warmupSeconds, boolean tuned) {
    }

    public static void main(String[] argv) {
        int code;
        try {
            code = run(parse(argv));
        } catch (IllegalArgumentException e) {
            System.err.println("rqueue-peer: " + e.getMessage());
            System.err.println("usage: rqueue-peer <produce-batch|produce-single|consume|produce-consume|fill|delay|idle>"
                    + " --host H --port P [--messages N] [--concurrency C] [--seconds S] [--warmup-seconds W]"
                    + " [--tuned]");
            code = 2;
        } catch (Throwable t) {
            t.printStackTrace();
            code = 1;
        }
        System.out.flush();
        System.exit(code);
    }

    private static Args parse(String[] argv) {
        if (argv.length == 0) {
            throw new IllegalArgumentException("missing workload");
        }
        String workload = argv[0];
        String host = "127.0.0.1";
        int port = 6379;
        Integer messages = null;
        int concurrency = 8;
        Integer seconds = null;
        int warmupSeconds = 0;
        boolean tuned = false;
        for (int i = 1; i < argv.length; i++) {
            String a = argv[i];
            switch (a) {
                case "--host" -> host = value(argv, ++i, a);
                case "--port" -> port = Integer.parseInt(value(argv, ++i, a));
                case "--messages" -> messages = Integer.parseInt(value(argv, ++i, a));
                case "--concurrency" -> concurrency = Integer.parseInt(value(argv, ++i, a));
                case "--seconds" -> seconds = Integer.parseInt(value(argv, ++i, a));
                case "--warmup-seconds" -> warmupSeconds = Integer.parseInt(value(argv, ++i, a));
                case "--tuned" -> tuned = true;
                default -> throw new IllegalArgumentException("unknown argument " + a);
            }
        }
        return new Args(workload, host, port, messages, concurrency, seconds, warmupSeconds, tuned);
    }

    private static String value(String[] argv, int i, String flag) {
        if (i >= argv.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return argv[i];
    }

    private static int run(Args a) throws Exception {
        boolean producerOnly;
        boolean reactive;
        switch (a.workload()) {
            case "produce-batch", "fill" -> {
                producerOnly = true;
                reactive = false;
            }
            case "produce-single" -> {
                producerOnly = true;
                reactive = true;
            }
            case "produce-consume" -> {
                producerOnly = false;
                reactive = true;
            }
            case "consume", "delay", "idle" -> {
                producerOnly = false;
                reactive = false;
            }
            default -> throw new IllegalArgumentException("unknown workload " + a.workload());
        }

        if (a.warmupSeconds() > 0 && WARMUP_WORKLOADS.contains(a.workload())) {
            warmUp(a);
        }

        SpringApplication app = springApp(a, QUEUE, producerOnly, reactive);
        log("starting Spring (workload=%s, redis=%s:%d, tuned=%s)", a.workload(), a.host(), a.port(), a.tuned());
        // set the target before the listener can start (consume drains a pre-filled queue right away)
        BenchStats.reset(switch (a.workload()) {
            case "consume", "produce-consume" -> n(a, 100_000);
            case "delay" -> n(a, 10_000);
            default -> Integer.MAX_VALUE;
        });
        ConfigurableApplicationContext ctx = app.run();
        String result;
        try {
            result = switch (a.workload()) {
                case "produce-batch" -> produceSync(ctx, n(a, 100_000), "produce-batch");
                case "fill" -> fill(ctx, n(a, 1_000_000));
                case "produce-single" -> produceSingle(ctx, n(a, 100_000));
                case "consume" -> consume(ctx, n(a, 100_000), sec(a, 120));
                case "produce-consume" -> produceConsume(ctx, n(a, 100_000), sec(a, 120));
                case "delay" -> delay(ctx, n(a, 10_000), sec(a, 10));
                case "idle" -> idle(sec(a, 12));
                default -> throw new IllegalStateException();
            };
        } catch (Throwable t) {
            closeQuietly(ctx);
            throw t;
        }
        System.out.println("RESULT " + result);
        System.out.flush();
        // the result is out: never let a slow shutdown (Rqueue waits up to 20 s for busy workers) hang the process
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(30_000);
            } catch (InterruptedException e) {
                return;
            }
            log("context close took over 30 s; halting");
            System.out.flush();
            Runtime.getRuntime().halt(0);
        }, "exit-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        closeQuietly(ctx);
        return 0;
    }

    /**
     * The Spring application of one phase: the listener ({@link BenchListener}) on {@code queue}, Rqueue's
     * producer-only mode (no polling, no scheduler) or not, the reactive enqueuer or not.
     */
    private static SpringApplication springApp(Args a, String queue, boolean producerOnly, boolean reactive) {
        Map<String, Object> props = new HashMap<>();
        props.put("spring.data.redis.host", a.host());
        props.put("spring.data.redis.port", a.port());
        props.put("spring.main.banner-mode", "off");
        props.put("bench.queue", queue);
        props.put("bench.concurrency", a.concurrency());
        if (producerOnly) {
            // Rqueue's documented producer-only setup: queues of the @RqueueListener are registered (so enqueue
            // works) but the container does not poll, and the delayed-message scheduler does not run.
            props.put("rqueue.system.mode", "PRODUCER");
            props.put("rqueue.scheduler.enabled", "false");
        }
        if (reactive) {
            // exposes ReactiveRqueueMessageEnqueuer, Rqueue's only non-blocking enqueue API
            props.put("rqueue.reactive.enabled", "true");
        }
        if (a.tuned()) {
            props.put("bench.tuned", "true");
        }

        SpringApplication app = new SpringApplication(RqueuePeer.class);
        app.setWebApplicationType(WebApplicationType.NONE);
        app.setDefaultProperties(props);
        return app;
    }

    private static int n(Args a, int def) {
        return a.messages() != null ? a.messages() : def;
    }

    private static int sec(Args a, int def) {
        return a.seconds() != null ? a.seconds() : def;
    }

    // ---------------------------------------------------------------- producing

    /**
     * produce-batch: Rqueue has no bulk/batch enqueue API (RqueueMessageEnqueuer and RqueueMessageSender only take
     * one message per call), so the "bulk" workloads are a synchronous {@code enqueue} loop.
     */
    private static String produceSync(ConfigurableApplicationContext ctx, int n, String what) {
        RqueueMessageEnqueuer enqueuer = ctx.getBean(RqueueMessageEnqueuer.class);
        long t0 = System.nanoTime();
        enqueueSync(enqueuer, QUEUE, n, what, NO_DEADLINE);
        double secs = (System.nanoTime() - t0) / 1e9;
        log("%s: %d messages in %.3f s", what, n, secs);
        return "{\"rate\":" + fmt(n / secs) + ",\"count\":" + n + "}";
    }

    /**
     * The synchronous enqueue loop of produce-batch / fill. Stops early (checked every {@value #DEADLINE_CHECK}
     * messages) once {@code deadline} (System.nanoTime(); only the warm-up passes one) has passed; returns the
     * number enqueued.
     */
    private static int enqueueSync(RqueueMessageEnqueuer enqueuer, String queue, int n, String what, long deadline) {
        long t0 = System.nanoTime();
        int i = 0;
        for (; i < n; i++) {
            if (i % DEADLINE_CHECK == 0 && passed(deadline)) {
                break;
            }
            if (enqueuer.enqueue(queue, BenchMessage.of(i)) == null) {
                throw new IllegalStateException("enqueue failed for message " + i);
            }
            if ((i + 1) % 100_000 == 0) {
                log("%s: %d enqueued after %.1f s", what, i + 1, (System.nanoTime() - t0) / 1e9);
            }
        }
        return i;
    }

    /** Whether {@code deadline} (System.nanoTime(), or NO_DEADLINE) has passed. */
    private static boolean passed(long deadline) {
        return deadline != NO_DEADLINE && System.nanoTime() - deadline >= 0;
    }

    /** fill: same synchronous enqueue loop (no bulk API), messages stay queued. */
    private static String fill(ConfigurableApplicationContext ctx, int n) {
        produceSync(ctx, n, "fill");
        return "{\"count\":" + n + "}";
    }

    /** produce-single: one {@link ReactiveRqueueMessageEnqueuer#enqueue} per message, waiting for every ack. */
    private static String produceSingle(ConfigurableApplicationContext ctx, int n) throws InterruptedException {
        ReactiveRqueueMessageEnqueuer enqueuer = ctx.getBean(ReactiveRqueueMessageEnqueuer.class);
        long t0 = System.nanoTime();
        sendAsync(enqueuer, QUEUE, n, NO_DEADLINE);
        double secs = (System.nanoTime() - t0) / 1e9;
        log("produce-single: %d messages in %.3f s", n, secs);
        return "{\"rate\":" + fmt(n / secs) + ",\"count\":" + n + "}";
    }

    /** Max enqueues in flight on the reactive enqueuer (bounds memory; the acks still pipeline on one connection). */
    private static final int IN_FLIGHT = 1024;

    /**
     * One reactive enqueue per message, at most IN_FLIGHT in flight, waiting for every ack. Stops sending early
     * (checked every {@value #DEADLINE_CHECK} messages) once {@code deadline} has passed, like enqueueSync; returns
     * the number sent (and acked).
     */
    private static int sendAsync(ReactiveRqueueMessageEnqueuer enqueuer, String queue, int n, long deadline)
            throws InterruptedException {
        Semaphore window = new Semaphore(IN_FLIGHT);
        CountDownLatch acked = new CountDownLatch(n);
        AtomicReference<Throwable> error = new AtomicReference<>();
        AtomicInteger failed = new AtomicInteger();
        int sent = 0;
        for (int i = 0; i < n && error.get() == null; i++) {
            if (i % DEADLINE_CHECK == 0 && passed(deadline)) {
                break;
            }
            window.acquire();
            sent++;
            enqueuer.enqueue(queue, BenchMessage.of(i)).subscribe(
                    id -> {
                        if (id == null) {
                            failed.incrementAndGet();
                        }
                    },
                    e -> {
                        error.compareAndSet(null, e);
                        window.release();
                        acked.countDown();
                    },
                    () -> {
                        window.release();
                        acked.countDown();
                    });
        }
        for (int k = sent; k < n; k++) {
            acked.countDown(); // never sent (deadline)
        }
        if (error.get() == null) {
            acked.await();
        }
        if (error.get() != null) {
            throw new IllegalStateException("async enqueue failed", error.get());
        }
        if (failed.get() > 0) {
            throw new IllegalStateException(failed.get() + " enqueues returned no id");
        }
        return sent;
    }

    // ---------------------------------------------------------------- consuming

    private static long awaitContainer() throws InterruptedException {
        if (!BenchStats.CONTAINER_STARTED.await(30, TimeUnit.SECONDS)) {
            log("no RqueueBootstrapEvent seen; timing from now");
            BenchStats.CONTAINER_STARTED_NANOS.compareAndSet(0, System.nanoTime());
        }
        return BenchStats.CONTAINER_STARTED_NANOS.get();
    }

    /**
     * consume: the queue was filled by an earlier produce-batch process. The listener starts with the context; the
     * clock starts when Rqueue's container reports it started (RqueueBootstrapEvent) and stops at the N-th handled
     * message or after --seconds.
     */
    private static String consume(ConfigurableApplicationContext ctx, int n, int seconds) throws InterruptedException {
        long t0 = awaitContainer();
        long first = BenchStats.FIRST_NANOS.get();
        if (first != 0 && first < t0) {
            t0 = first; // Rqueue publishes its bootstrap event after the pollers are already running
        }
        return finishConsume("consume", n, t0, seconds);
    }

    private static String finishConsume(String what, int n, long t0, int seconds) throws InterruptedException {
        long deadline = t0 + TimeUnit.SECONDS.toNanos(seconds);
        long wait = deadline - System.nanoTime();
        boolean done = BenchStats.HANDLED.get() >= n || BenchStats.DONE.await(Math.max(0, wait), TimeUnit.NANOSECONDS);
        long end;
        int handled;
        if (done) {
            end = BenchStats.DONE_NANOS.get();
            handled = n;
        } else {
            end = System.nanoTime();
            handled = Math.min(n, BenchStats.HANDLED.get());
            log("%s: time cap of %d s reached with %d of %d handled", what, seconds, handled, n);
        }
        double secs = (end - t0) / 1e9;
        log("%s: %d handled in %.3f s", what, handled, secs);
        return "{\"rate\":" + fmt(handled / secs) + ",\"count\":" + handled + "}";
    }

    /** produce-consume: listener running, then N async enqueues; clock from the first send to the N-th handled. */
    private static String produceConsume(ConfigurableApplicationContext ctx, int n, int seconds)
            throws InterruptedException {
        ReactiveRqueueMessageEnqueuer enqueuer = ctx.getBean(ReactiveRqueueMessageEnqueuer.class);
        awaitContainer();
        long t0 = System.nanoTime();
        sendAsync(enqueuer, QUEUE, n, NO_DEADLINE);
        log("produce-consume: all %d enqueued after %.3f s (%d handled so far)", n, (System.nanoTime() - t0) / 1e9,
                BenchStats.HANDLED.get());
        return finishConsume("produce-consume", n, t0, seconds);
    }

    /**
     * delay: N messages due uniformly over the next --seconds, sent with {@code enqueueIn}; the handler records
     * {@code now - due} (ms). Waits for all, or 2 x seconds + 30 s.
     */
    private static String delay(ConfigurableApplicationContext ctx, int n, int seconds) throws InterruptedException {
        RqueueMessageEnqueuer enqueuer = ctx.getBean(RqueueMessageEnqueuer.class);
        BenchStats.lateness = new long[n];
        awaitContainer();
        long base = System.currentTimeMillis() + 1000; // PROTOCOL.md: due times start 1 s ahead
        long spanMs = seconds * 1000L;
        long t0 = System.nanoTime();
        int sentLate = scheduleDelayed(enqueuer, QUEUE, n, base, spanMs);
        log("delay: %d messages scheduled in %.3f s (%d of them sent at/after their due time)", n,
                (System.nanoTime() - t0) / 1e9, sentLate);
        long waitMs = base + 2L * spanMs + 30_000 - System.currentTimeMillis();
        if (!BenchStats.DONE.await(Math.max(0, waitMs), TimeUnit.MILLISECONDS)) {
            log("delay: timed out with %d of %d handled", BenchStats.HANDLED.get(), n);
        }
        int handled = Math.min(n, BenchStats.HANDLED.get());
        long[] lat = Arrays.copyOf(BenchStats.lateness, handled);
        Arrays.sort(lat);
        return "{\"p50\":" + rank(lat, 0.50) + ",\"p99\":" + rank(lat, 0.99) + ",\"max\":"
                + (handled == 0 ? 0 : lat[handled - 1]) + ",\"count\":" + handled + "}";
    }

    /**
     * Sends n messages with {@code enqueueIn}, due uniformly over {@code spanMs} from {@code base} (epoch ms), and
     * publishes their due times to the listener ({@link BenchStats#dueMillis}). Returns how many were sent at or after
     * their due time (the synchronous loop fell behind the schedule).
     */
    private static int scheduleDelayed(RqueueMessageEnqueuer enqueuer, String queue, int n, long base, long spanMs) {
        long[] due = new long[n];
        for (int i = 0; i < n; i++) {
            due[i] = base + (n == 1 ? 0 : (spanMs * i) / (n - 1));
        }
        BenchStats.dueMillis = due;
        int sentLate = 0;
        for (int i = 0; i < n; i++) {
            long delayMs = due[i] - System.currentTimeMillis();
            if (delayMs <= 0) {
                sentLate++;
                delayMs = 0;
            }
            if (enqueuer.enqueueIn(queue, BenchMessage.of(i), delayMs) == null) {
                throw new IllegalStateException("enqueueIn failed for message " + i);
            }
        }
        return sentLate;
    }

    /** Nearest-rank percentile of a sorted array (0 when empty). */
    private static long rank(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        int r = (int) Math.ceil(p * sorted.length);
        return sorted[Math.max(1, r) - 1];
    }

    /** idle: listener on an empty queue, READY, sleep --seconds. */
    private static String idle(int seconds) throws InterruptedException {
        awaitContainer();
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(seconds * 1000L);
        return "{\"count\":0}";
    }

    // ---------------------------------------------------------------- warm-up

    /**
     * The warm-up phase (--warmup-seconds, PROTOCOL.md): lets HotSpot compile the code paths the measurement uses
     * before its clock starts; nothing here is measured. It runs in a Spring context of its own whose only listener
     * is the same {@link BenchListener} (same concurrency, same container defaults) on {@value #WARMUP_QUEUE}, so
     * nothing touches the measured queue. The context is closed afterwards, which stops its listener container and
     * schedulers for good: no warm-up poller is left to issue Redis commands in the measured phase (or, as idle never
     * warms up, in idle). Then every warm-up key is deleted and the shared counters are reset.
     * <ul>
     *   <li>produce-batch / produce-single / consume / produce-consume: the listener runs (Rqueue's defaults consume
     *   only ~40 msgs/s, so it handles few) while rounds of WARMUP_ROUND synchronous enqueues (produce-batch's loop),
     *   then WARMUP_ROUND reactive enqueues (produce-single's windowing) go in, until the deadline;</li>
     *   <li>delay: the listener and Rqueue's scheduler run while rounds of WARMUP_DELAY_ROUND {@code enqueueIn}
     *   messages due over the next second go in, each round waiting for its messages (at most until the deadline +
     *   2 s).</li>
     * </ul>
     */
    private static void warmUp(Args a) throws Exception {
        boolean delay = a.workload().equals("delay");
        log("warm-up: starting Spring on queue %s", WARMUP_QUEUE);
        BenchStats.reset(Integer.MAX_VALUE);
        // a consumer (not producer-only); the reactive enqueuer for W1, whose rounds also warm produce-single's path
        ConfigurableApplicationContext ctx = springApp(a, WARMUP_QUEUE, false, !delay).run();
        RqueueConfig rqueueConfig = ctx.getBean(RqueueConfig.class);
        long sent = 0;
        long began;
        try {
            awaitContainer();
            // the W seconds count from here: on a busy machine Spring's startup alone can take longer than W
            began = System.nanoTime();
            long deadline = began + TimeUnit.SECONDS.toNanos(a.warmupSeconds());
            RqueueMessageEnqueuer enqueuer = ctx.getBean(RqueueMessageEnqueuer.class);
            if (delay) {
                long roundWait = deadline + TimeUnit.SECONDS.toNanos(2);
                BenchStats.lateness = new long[0]; // the handler computes lateness; the warm-up keeps none
                while (!passed(deadline)) {
                    scheduleDelayed(enqueuer, WARMUP_QUEUE, WARMUP_DELAY_ROUND, System.currentTimeMillis(),
                            WARMUP_DELAY_SPAN_MS);
                    sent += WARMUP_DELAY_ROUND;
                    while (BenchStats.HANDLED.get() < sent && !passed(roundWait)) {
                        Thread.sleep(10);
                    }
                }
            } else {
                ReactiveRqueueMessageEnqueuer reactive = ctx.getBean(ReactiveRqueueMessageEnqueuer.class);
                while (!passed(deadline)) {
                    sent += enqueueSync(enqueuer, WARMUP_QUEUE, WARMUP_ROUND, "warm-up", deadline);
                    sent += sendAsync(reactive, WARMUP_QUEUE, WARMUP_ROUND, deadline);
                }
            }
        } finally {
            closeQuietly(ctx);
        }
        int handled = BenchStats.HANDLED.get();
        int deleted = deleteWarmupKeys(a, rqueueConfig);
        BenchStats.clear();
        System.err.printf(Locale.ROOT, "[rqueue-peer] warmed up: %d sent, %d handled in %d ms (%d keys deleted)%n",
                sent, handled, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began), deleted);
        System.err.flush();
    }

    /**
     * Deletes every key the warm-up left (SCAN + DEL on a plain Lettuce connection; Rqueue's own queue deletion only
     * marks the queue and expires its data later): the keys named after the queue (queue, processing / scheduled /
     * completed sets, config, statistics, message metadata, locks), the job records of its messages (keyed by message
     * id, found through the metadata keys), and its entry in Rqueue's set of queues. Returns the number deleted.
     */
    private static int deleteWarmupKeys(Args a, RqueueConfig rqueueConfig) throws Exception {
        RedisClient client = RedisClient.create(RedisURI.create(a.host(), a.port()));
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            RedisCommands<String, String> redis = connection.sync();
            // values Rqueue stores (job keys in a message's jobs list, members of the queues set) go through its
            // serializer (JSON: a quoted string)
            RqueueRedisSerializer serializer = new RqueueRedisSerializer();
            String metadataPrefix = RqueueMessageUtils.getMessageMetaId(WARMUP_QUEUE, "");
            List<String> keys = new ArrayList<>();
            List<RedisFuture<List<String>>> jobLists = new ArrayList<>(); // pipelined LRANGEs
            ScanArgs match = ScanArgs.Builder.matches(rqueueConfig.getPrefix() + "*" + WARMUP_QUEUE + "*").limit(1000);
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                KeyScanCursor<String> page = redis.scan(cursor, match);
                for (String key : page.getKeys()) {
                    keys.add(key);
                    if (key.startsWith(metadataPrefix)) {
                        String jobs = rqueueConfig.getJobsKey(key.substring(metadataPrefix.length()));
                        keys.add(jobs);
                        jobLists.add(connection.async().lrange(jobs, 0, -1));
                    }
                }
                cursor = page;
            } while (!cursor.isFinished());
            for (RedisFuture<List<String>> jobs : jobLists) {
                for (String job : jobs.get(30, TimeUnit.SECONDS)) {
                    keys.add((String) serializer.deserialize(job.getBytes(StandardCharsets.UTF_8)));
                }
            }
            int deleted = 0;
            for (int from = 0; from < keys.size(); from += 1000) {
                List<String> batch = keys.subList(from, Math.min(keys.size(), from + 1000));
                deleted += redis.del(batch.toArray(String[]::new)).intValue();
            }
            redis.srem(rqueueConfig.getQueuesKey(),
                    new String(serializer.serialize(WARMUP_QUEUE), StandardCharsets.UTF_8));
            return deleted;
        } finally {
            client.shutdown();
        }
    }

    // ---------------------------------------------------------------- helpers

    private static void closeQuietly(ConfigurableApplicationContext ctx) {
        long t0 = System.nanoTime();
        try {
            ctx.close();
        } catch (Throwable t) {
            log("error closing context: %s", t);
        }
        log("context closed in %.1f s", (System.nanoTime() - t0) / 1e9);
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    private static void log(String fmt, Object... args) {
        System.out.println("[rqueue-peer] " + String.format(Locale.ROOT, fmt, args));
    }
}
