package io.rmq.core;

import java.time.Duration;

/**
 * How many dead messages a topic keeps, and for how long: when a message is moved to the dead queue, the oldest dead
 * ones beyond {@code maxCount} or older than {@code maxAge} are deleted with it (with their details, headers and
 * payload), so that a systematic failure (a poison producer, a downstream outage) cannot fill Redis by itself.
 * Trimming happens only when something dies: a queue where nothing dies keeps what it holds.
 * <p>
 * The dead queue is split into the topic's slots like its messages; the count bound is shared out evenly, each slot
 * keeping at most {@code ceil(maxCount / slotAmount)} (so a topic keeps at most about {@code maxCount}, and somewhat
 * fewer when deaths fall unevenly on its slots). Each instance trims with its own settings as it buries.
 *
 * @param maxCount    most dead messages of the topic (0 = no bound)
 * @param maxAge      longest a dead message is kept, from the time it died on Redis's clock (zero = no bound; whole
 *                    milliseconds)
 * @param keepExpired whether messages that expire before they are handled (see
 *                    {@code OutgoingMessage#expiresAt}) are moved to the dead queue, with reason "expired at ...",
 *                    instead of being dropped
 */
public record DeadLetterRetention(long maxCount, Duration maxAge, boolean keepExpired) {

    /** 10,000 dead messages and 30 days per topic, in the spirit of Sidekiq's dead set. */
    public static final DeadLetterRetention DEFAULT = new DeadLetterRetention(10_000, Duration.ofDays(30));

    /** Every dead message is kept until an operator deletes or requeues it (RMQ before retention). */
    public static final DeadLetterRetention KEEP_ALL = new DeadLetterRetention(0, Duration.ZERO);

    /** Expired messages are dropped. */
    public DeadLetterRetention(long maxCount, Duration maxAge) {
        this(maxCount, maxAge, false);
    }

    public DeadLetterRetention {
        if (maxCount < 0) {
            throw new RmqInvalidArgumentException("dead-letter maxCount", maxCount, "must be zero (no bound) or positive");
        }
        if (maxAge == null || maxAge.isNegative()) {
            throw new RmqInvalidArgumentException("dead-letter maxAge", maxAge, "must be zero (no bound) or positive");
        }
    }

    /** This retention, with expired messages moved to the dead queue ({@code true}) or dropped. */
    public DeadLetterRetention withKeepExpired(boolean keep) {
        return new DeadLetterRetention(maxCount, maxAge, keep);
    }

    /** The most dead messages one of {@code slotAmount} slots keeps: the count shared out, rounded up (0 = none). */
    public long maxCountPerSlot(int slotAmount) {
        return maxCount == 0 ? 0 : (maxCount + slotAmount - 1) / slotAmount;
    }
}
