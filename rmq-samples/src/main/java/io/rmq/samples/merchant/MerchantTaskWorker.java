package io.rmq.samples.merchant;

import java.util.ArrayList;
import java.util.List;

import io.rmq.spring.RmqMessage;
import io.rmq.spring.annotation.RmqListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.stereotype.Component;

/**
 * Story 2, PRIORITY: the same re-render work, but queued by merchant tier, so when a backlog has built up the key
 * accounts are served first. One handler thread, so the order is plain to see. The listener does not start with the
 * application ({@code autoStartup = "false"}): the driver starts it once the backlog is there, as when a render farm
 * comes back from maintenance.
 */
@Component
public class MerchantTaskWorker {

    /** The listener's container id, to start it through {@link io.rmq.spring.listener.RmqListenerEndpointRegistry}. */
    public static final String LISTENER_ID = "merchant-tasks";

    private static final Logger log = LoggerFactory.getLogger(MerchantTaskWorker.class);

    /** Simulated cost of one task. */
    private static final long WORK_MILLIS = 40;

    /** One handled task, with the priority it was delivered with. */
    public record HandledTask(String merchant, long itemId, long priority, long handledAt) {

        public MerchantTier tier() {
            return MerchantTier.ofPriority(priority);
        }
    }

    private final List<HandledTask> handled = new ArrayList<>();

    @RmqListener(topic = "merchant-tasks", id = LISTENER_ID, concurrency = "1", autoStartup = "false")
    public void handle(RmqMessage<MerchantTask> message) throws InterruptedException {
        MerchantTask task = message.payload();
        long priority = (long) message.score();
        Thread.sleep(WORK_MILLIS);
        HandledTask done = new HandledTask(task.merchant(), task.itemId(), priority, System.currentTimeMillis());
        int position;
        synchronized (this) {
            handled.add(done);
            position = handled.size();
        }
        log.info("  <- #{} {} (priority {}): re-rendered item {} of {}", position, String.format("%-9s", done.tier()),
                String.format("%3d", priority), task.itemId(), task.merchant());
    }

    public synchronized List<HandledTask> handled() {
        return List.copyOf(handled);
    }
}
