package io.rmq.spring.operations;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

import io.rmq.spring.annotation.RmqListener;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * An application for the operations tests (endpoint, dashboard, browser): a listener that fails on purpose while
 * told to (its messages die at once), a worker to pause and resume, an ORDERLY listener, and (in properties) a
 * backlog topic nobody consumes.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class OpsTestApplication {

    /** What each test property set needs besides Redis. */
    public static final String[] PROPERTIES = {"rmq.topics.ops-backlog.type=FIXED_TIME",
            "rmq.topics.ops-backlog.slot-amount=4", "rmq.listeners.ops-orderly.mode=ORDERLY",
            "rmq.coordination.ownership-timeout=2s"};

    /** The fragment of the failure the failing listener causes on purpose (for LogCapture). */
    public static final String ON_PURPOSE = "fails on purpose";

    public static class Handlers {

        public volatile boolean failing = true;
        public final BlockingQueue<String> handled = new LinkedBlockingQueue<>();
        public final BlockingQueue<String> worked = new LinkedBlockingQueue<>();

        @RmqListener(id = "ops-failing", topic = "ops-failing", type = "FIXED_TIME", slotAmount = "4",
                maxRetries = "0")
        public void onFailing(String body) {
            if (failing) {
                throw new IllegalStateException(ON_PURPOSE + ": <b>" + body + "</b>");
            }
            handled.add(body);
        }

        /** Fails on purpose; its retry waits five minutes, so the message stays "retrying". */
        @RmqListener(id = "ops-flaky", topic = "ops-flaky", type = "FIXED_TIME", slotAmount = "2", maxRetries = "3",
                backoffInitial = "5m", backoffJitter = "0")
        public void onFlaky(String body) {
            throw new IllegalStateException(ON_PURPOSE + ": " + body);
        }

        @RmqListener(id = "ops-worker", topic = "ops-work", type = "PRIORITY", slotAmount = "2", concurrency = "2")
        public void onWork(String body) {
            worked.add(body);
        }

        @RmqListener(id = "ops-orderly", topic = "ops-ordered", type = "FIXED_TIME", slotAmount = "4",
                concurrency = "2")
        public void onOrdered(String body) {
        }
    }

    @Bean
    Handlers handlers() {
        return new Handlers();
    }
}
