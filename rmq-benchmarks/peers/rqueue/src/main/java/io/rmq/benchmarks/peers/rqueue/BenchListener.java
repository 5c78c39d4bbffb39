package io.rmq.benchmarks.peers.rqueue;

import com.github.sonus21.rqueue.annotation.RqueueListener;
import com.github.sonus21.rqueue.models.event.RqueueBootstrapEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * The benchmark consumer. Always declared (so the queue is registered in every process, which Rqueue needs before
 * it accepts an enqueue); in the producing workloads it is kept from polling by {@code rqueue.system.mode=PRODUCER}
 * (Rqueue's documented producer-only setup), so it only consumes in consume / produce-consume / delay / idle.
 *
 * <p>The queue is {@code bench.queue}: {@link RqueuePeer#QUEUE} in the measured phase, {@link RqueuePeer#WARMUP_QUEUE}
 * in the warm-up phase's own Spring context (closed before the measured one starts).
 *
 * <p>{@code batchSize} is left at Rqueue's default (10 per poll for a listener with concurrency, capped by the free
 * workers, so effectively up to 8 here); {@code --tuned} does not change it either, as the cap would win.
 */
@Component
public class BenchListener {

    @RqueueListener(value = "${bench.queue}", concurrency = "${bench.concurrency:8}")
    public void onMessage(BenchMessage message) {
        // no-op handler: just count
        BenchStats.onHandled(message);
    }

    @EventListener
    public void onBootstrap(RqueueBootstrapEvent event) {
        if (event.isStartup() && BenchStats.CONTAINER_STARTED_NANOS.compareAndSet(0, System.nanoTime())) {
            BenchStats.CONTAINER_STARTED.countDown();
        }
    }
}
