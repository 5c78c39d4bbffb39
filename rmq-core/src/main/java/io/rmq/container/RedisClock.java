package io.rmq.container;

/**
 * The estimated offset of Redis's clock from the local one (Redis minus local, ms). Due times are Redis's; the poller
 * sleeps and handler threads hold look-ahead deliveries by the local clock. Threads: only the poller updates it
 * ({@link #bracket}); handler threads and the wake-up listener read {@link #offset} (volatile).
 * <p>
 * Each pop brackets it: Redis read its clock after the request left and before the reply arrived, so the offset lies
 * in [redisNow - received, redisNow - sent]. The estimate keeps the tightest of these lower bounds, clamped into the
 * latest interval (so a clock step is followed at once); it never runs ahead of Redis's clock, so nothing held until
 * its due time starts early.
 */
final class RedisClock {

    private volatile long offset;
    /** Poller thread only. */
    private boolean known;

    long offset() {
        return offset;
    }

    /** A pop's bracket of the offset (poller thread). */
    void bracket(long lowerBound, long upperBound) {
        long estimate = known ? Math.max(offset, lowerBound) : lowerBound;
        offset = Math.min(estimate, upperBound);
        known = true;
    }
}
