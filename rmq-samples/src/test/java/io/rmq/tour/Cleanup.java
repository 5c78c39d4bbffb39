package io.rmq.tour;

import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.spring.annotation.RmqScheduled;

/** The tour's periodic job. */
public class Cleanup {

    final Carts carts = new Carts();

    // tag::tour-scheduled[]
    @RmqScheduled(name = "expire-carts", cron = "0 */5 * * * *", zone = "Europe/Paris")   // once, on one instance
    void expireCarts() {
        carts.expireAbandoned();
    }
    // end::tour-scheduled[]

    /** Stands for the shop's carts: counts the clean-ups. */
    static class Carts {
        final AtomicInteger cleanups = new AtomicInteger();

        void expireAbandoned() {
            cleanups.incrementAndGet();
        }
    }
}
