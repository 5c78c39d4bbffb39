package io.rmq.spring.operations;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

import io.rmq.spring.annotation.RmqListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Failing listeners for the operator actions' tests ({@code OperatorActionsTests}, {@code DashboardActionsBrowserTest}):
 * a PRIORITY one whose retry waits five minutes, and one whose messages die at once with an error class that depends
 * on the body ({@code arg…}: IllegalArgumentException, others IllegalStateException). The queues record every attempt
 * (any listener thread adds; tests read).
 */
@Configuration
public class OperatorActionsListeners {

    public static final BlockingQueue<String> PRIORITY_ATTEMPTS = new LinkedBlockingQueue<>();
    public static final BlockingQueue<String> MIXED_ATTEMPTS = new LinkedBlockingQueue<>();

    @Bean
    Failing operatorActionsFailing() {
        return new Failing();
    }

    public static class Failing {

        @RmqListener(id = "ops-prio-flaky", topic = "ops-prio-flaky", type = "PRIORITY", slotAmount = "2",
                maxRetries = "5", backoffInitial = "5m", backoffJitter = "0")
        public void onPriority(String body) {
            PRIORITY_ATTEMPTS.add(body);
            throw new IllegalStateException(OpsTestApplication.ON_PURPOSE + ": " + body);
        }

        @RmqListener(id = "ops-mixed", topic = "ops-mixed", type = "FIXED_TIME", slotAmount = "4", maxRetries = "0")
        public void onMixed(String body) {
            MIXED_ATTEMPTS.add(body);
            if (body.startsWith("arg")) {
                throw new IllegalArgumentException(OpsTestApplication.ON_PURPOSE + ": " + body);
            }
            throw new IllegalStateException(OpsTestApplication.ON_PURPOSE + ": " + body);
        }
    }
}
