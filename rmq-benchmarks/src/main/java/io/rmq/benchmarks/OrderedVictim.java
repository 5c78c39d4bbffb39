package io.rmq.benchmarks;

import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;

import io.rmq.consumer.Delivery;
import io.rmq.container.internal.OrderlyListenerContainer;
import io.rmq.core.ConsumeMode;
import io.rmq.core.TopicType;

/**
 * The instance the takeover workload kills ({@link OrderedWorkloads#takeover}): runs one ORDERLY container (no-op
 * handler) on the takeover topic until it is killed, printing {@code OWNED 1,3,5} whenever its owned slots change.
 * Exits by itself when its standard input closes (the benchmark process is gone) or after ten minutes.
 * <pre>OrderedVictim host port topic ownershipMillis concurrency</pre>
 */
public final class OrderedVictim {

    private OrderedVictim() {
    }

    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        String topic = args[2];
        Duration ownership = Duration.ofMillis(Long.parseLong(args[3]));
        int concurrency = Integer.parseInt(args[4]);
        Thread orphanWatch = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // nothing is sent; EOF means the parent is gone
                }
            }
            catch (java.io.IOException ex) {
                // as EOF
            }
            Runtime.getRuntime().halt(3);
        }, "orphan-watch");
        orphanWatch.setDaemon(true);
        orphanWatch.start();

        OrderedWorkloads.Instance instance = OrderedWorkloads.Instance.connect(host, port);
        instance.rmq().defineTopic(topic, TopicType.FIXED_TIME, OrderedWorkloads.SLOTS);
        OrderlyListenerContainer container = (OrderlyListenerContainer) instance.rmq().container(topic,
                OrderedWorkloads.settings(), OrderedWorkloads.Tick.class,
                (OrderedWorkloads.Tick t, Delivery d) -> { },
                OrderedWorkloads.options("bench-takeover", concurrency, ConsumeMode.ORDERLY, ownership));
        container.start();
        Set<Integer> last = null;
        long until = System.currentTimeMillis() + 600_000;
        while (System.currentTimeMillis() < until) {
            Set<Integer> owned = container.ownedSlots();
            if (!owned.equals(last)) {
                System.out.println("OWNED " + owned.stream().map(String::valueOf).collect(Collectors.joining(",")));
                System.out.flush();
                last = owned;
            }
            Thread.sleep(5);
        }
        Runtime.getRuntime().halt(4);
    }
}
