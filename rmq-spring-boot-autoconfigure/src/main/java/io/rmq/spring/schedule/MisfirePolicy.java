package io.rmq.spring.schedule;

/**
 * What happens to a firing taken later than its schedule's misfire threshold (every instance was down, or Redis was
 * unreachable, when it fell due).
 */
public enum MisfirePolicy {

    /**
     * The latest missed firing runs once, late; the missed firings before it are dropped (counted as misfires). The
     * default: a periodic job (a clean-up, a report, a sync) usually should catch up once after an outage, as Quartz's
     * cron triggers do by default, rather than wait for its next time.
     */
    FIRE_ONCE,

    /** Every missed firing is dropped (counted as a misfire); the schedule carries on with its next time. */
    SKIP;

    /** As written in configuration and stored in Redis: {@code fire-once}, {@code skip}. */
    public String value() {
        return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }

    /** Reads {@code fire-once} / {@code skip} (any case, dashes or underscores). */
    public static MisfirePolicy parse(String value) {
        String normalized = value.trim().toUpperCase(java.util.Locale.ROOT).replace('-', '_');
        for (MisfirePolicy policy : values()) {
            if (policy.name().equals(normalized)) {
                return policy;
            }
        }
        throw new IllegalArgumentException("must be fire-once or skip");
    }
}
