package io.rmq.benchmarks.peers.rqueue;

import com.github.sonus21.rqueue.core.ReactiveRqueueMessageEnqueuer;
import com.github.sonus21.rqueue.core.RqueueMessageEnqueuer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
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
 * java -jar rqueue-peer.jar &lt;workload&gt; --host H --port P [--messages N] [--concurrency C] [--seconds S] [--tuned]
 * </pre>
 *
 * Everything runs with Rqueue's defaults; only {@code --tuned} (off by default, not used by the orchestrator)
 * changes the listener container's poll interval / back-off. Prints one {@code RESULT {...}} line (and
 * {@code READY} for idle); everything else is free-form log.
 */
@SpringBootApplication
public class RqueuePeer {

    /** Queue name shared by every process (produce-batch fills it, a later consume process drains it). */
    static final String QUEUE = "bench";

    private record Args(String workload, String host, int port, Integer messages, int concurrency, Integer seconds,
                        boolean tuned) {
    }

    public static void main(String[] argv) {
        int code;
        try {
            code = run(parse(argv));
        } catch (IllegalArgumentException e) {
            System.err.println("rqueue-peer: " + e.getMessage());
            System.err.println("usage: rqueue-peer <produce-batch|produce-single|consume|produce-consume|fill|delay|idle>"
                    + " --host H --port P [--messages N] [--concurrency C] [--seconds S] [--tuned]");
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
        boolean tuned = false;
        for (int i = 1; i < argv.length; i++) {
            String a = argv[i];
            switch (a) {
                case "--host" -> host = value(argv, ++i, a);
                case "--port" -> port = Integer.parseInt(value(argv, ++i, a));
                case "--messages" -> messages = Integer.parseInt(value(argv, ++i, a));
                case "--concurrency" -> concurrency = Integer.parseInt(value(argv, ++i, a));
                case "--seconds" -> seconds = Integer.parseInt(value(argv, ++i, a));
                case "--tuned" -> tuned = true;
                default -> throw new IllegalArgumentException("unknown argument " + a);
            }
        }
        return new Args(workload, host, port, messages, concurrency, seconds, tuned);
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

        Map<String, Object> props = new HashMap<>();
        props.put("spring.data.redis.host", a.host());
        props.put("spring.data.redis.port", a.port());
        props.put("spring.main.banner-mode", "off");
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
        for (int i = 0; i < n; i++) {
            if (enqueuer.enqueue(QUEUE, BenchMessage.of(i)) == null) {
                throw new IllegalStateException("enqueue failed for message " + i);
            }
            if ((i + 1) % 100_000 == 0) {
                log("%s: %d enqueued after %.1f s", what, i + 1, (System.nanoTime() - t0) / 1e9);
            }
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        log("%s: %d messages in %.3f s", what, n, secs);
        return "{\"rate\":" + fmt(n / secs) + ",\"count\":" + n + "}";
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
        sendAsync(enqueuer, n);
        double secs = (System.nanoTime() - t0) / 1e9;
        log("produce-single: %d messages in %.3f s", n, secs);
        return "{\"rate\":" + fmt(n / secs) + ",\"count\":" + n + "}";
    }

    /** Max enqueues in flight on the reactive enqueuer (bounds memory; the acks still pipeline on one connection). */
    private static final int IN_FLIGHT = 1024;

    private static void sendAsync(ReactiveRqueueMessageEnqueuer enqueuer, int n) throws InterruptedException {
        Semaphore window = new Semaphore(IN_FLIGHT);
        CountDownLatch acked = new CountDownLatch(n);
        AtomicReference<Throwable> error = new AtomicReference<>();
        AtomicInteger failed = new AtomicInteger();
        for (int i = 0; i < n && error.get() == null; i++) {
            window.acquire();
            enqueuer.enqueue(QUEUE, BenchMessage.of(i)).subscribe(
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
        if (error.get() == null) {
            acked.await();
        }
        if (error.get() != null) {
            throw new IllegalStateException("async enqueue failed", error.get());
        }
        if (failed.get() > 0) {
            throw new IllegalStateException(failed.get() + " enqueues returned no id");
        }
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
        sendAsync(enqueuer, n);
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
        long[] due = new long[n];
        BenchStats.lateness = new long[n];
        BenchStats.dueMillis = due;
        awaitContainer();
        long base = System.currentTimeMillis() + 1000; // PROTOCOL.md: due times start 1 s ahead
        long spanMs = seconds * 1000L;
        for (int i = 0; i < n; i++) {
            due[i] = base + (n == 1 ? 0 : (spanMs * i) / (n - 1));
        }
        long t0 = System.nanoTime();
        int sentLate = 0; // sent at or after its due time (the synchronous loop fell behind the schedule)
        for (int i = 0; i < n; i++) {
            long delayMs = due[i] - System.currentTimeMillis();
            if (delayMs <= 0) {
                sentLate++;
                delayMs = 0;
            }
            if (enqueuer.enqueueIn(QUEUE, BenchMessage.of(i), delayMs) == null) {
                throw new IllegalStateException("enqueueIn failed for message " + i);
            }
        }
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
