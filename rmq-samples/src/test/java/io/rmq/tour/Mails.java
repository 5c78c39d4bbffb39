package io.rmq.tour;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rmq.spring.annotation.RmqListener;

/** The tour's rate-limited listener. */
public class Mails {

    final Outbox outbox = new Outbox();

    // tag::tour-rate-limit[]
    @RmqListener(topic = "mails", type = "PRIORITY", rateLimit = "50/s")   // 50 a second, all instances together
    void send(String mail) {
        outbox.deliver(mail);
    }
    // end::tour-rate-limit[]

    /** Stands for the mail server: records what was delivered. */
    static class Outbox {
        final List<String> delivered = new CopyOnWriteArrayList<>();

        void deliver(String mail) {
            delivered.add(mail);
        }
    }
}
