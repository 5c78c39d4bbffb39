package io.rmq.container.internal;

/**
 * The estimated offset of Redis's clock from the local one (Redis minus local, ms), one per listener container and the
 * only such estimate on the consuming side. Due times are Redis's; the CONCURRENT poller sleeps, its handler threads
 * hold look-ahead deliveries, and an ORDERLY container wakes its slots, by the local clock. Threads: the CONCURRENT
 * poller, or whichever thread settles an ORDERLY step's reply, updates it ({@link #bracket}, synchronized: ORDERLY
 * steps settle on many threads); anyone reads {@link #offset} (volatile).
 * <p>
 * Each pop or step brackets it: Redis read its clock after the request left and before the reply arrived, so the
 * offset lies in [redisNow - received, redisNow - sent]. The estimate keeps the tightest of these lower bounds,
 * clamped into the latest interval (so a clock step is followed at once); it never runs ahead of Redis's clock, so
 * nothing held until its due time starts early, and no slot is woken before its message is due.
 */
final class RedisClock {

    private volatile long offset;
    /** Written under this object's monitor. */
    private boolean known;

    long offset() {
        return offset;
    }

    /** A round trip's bracket of the offset: Redis's time minus the local time the reply came and the request left. */
    synchronized void bracket(long lowerBound, long upperBound) {
        long estimate = known ? Math.max(offset, lowerBound) : lowerBound;
        offset = Math.min(estimate, upperBound);
        known = true;
    }
}
