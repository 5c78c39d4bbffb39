package io.rmq.samples.quote;

import java.util.ArrayList;
import java.util.List;

import io.rmq.spring.annotation.RmqListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Story 5, deduplication window: mails payment reminders. The topic's {@code dedupe-for} (application.yml) keeps an
 * order's reminder from going out again within a minute of the last one, however often the billing job asks.
 */
@Component
public class ReminderMailer {

    private static final Logger log = LoggerFactory.getLogger(ReminderMailer.class);

    private final List<String> mailed = new ArrayList<>();

    @RmqListener(topic = "payment-reminders", id = "reminder-mailer", concurrency = "1")
    public void mail(PaymentReminder reminder) {
        synchronized (this) {
            mailed.add(reminder.orderId());
        }
        log.info("  <- reminder mailed: please pay order {}", reminder.orderId());
    }

    /** The orders reminded, in order. */
    public synchronized List<String> mailed() {
        return List.copyOf(mailed);
    }
}
