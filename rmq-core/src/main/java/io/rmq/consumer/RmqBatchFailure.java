package io.rmq.consumer;

import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Thrown by a batch listener ({@link BatchMessageHandler}, {@code @RmqListener(batch = "true")}) when only some
 * messages of its batch failed: the messages at {@link #failedIndexes()} (positions in the list the listener
 * received) fail — each is retried after its backoff or goes to the dead queue, as the failure policy and the error
 * handler decide, with {@link #causeOf(int)} as its error — and every other message of the batch is acknowledged.
 * <p>
 * An index outside the batch makes the whole batch fail (the listener's report cannot be trusted).
 */
public class RmqBatchFailure extends RuntimeException {

    private final SortedMap<Integer, Throwable> causes;
    private final SortedSet<Integer> failedIndexes;

    /**
     * The messages at {@code failedIndexes} failed, all for the same {@code cause} (may be null: this exception is
     * then their error).
     */
    public RmqBatchFailure(String message, Throwable cause, int... failedIndexes) {
        super(message, cause);
        if (failedIndexes == null || failedIndexes.length == 0) {
            throw new IllegalArgumentException("RmqBatchFailure needs at least one failed index");
        }
        SortedSet<Integer> indexes = new TreeSet<>();
        for (int index : failedIndexes) {
            indexes.add(index);
        }
        this.failedIndexes = Collections.unmodifiableSortedSet(indexes);
        this.causes = Collections.emptySortedMap();
    }

    /** Each failed message with its own cause: index in the batch → what went wrong with that message. */
    public RmqBatchFailure(String message, Map<Integer, ? extends Throwable> causes) {
        super(message);
        if (causes == null || causes.isEmpty()) {
            throw new IllegalArgumentException("RmqBatchFailure needs at least one failed index");
        }
        SortedMap<Integer, Throwable> copy = new TreeMap<>(causes);
        this.causes = Collections.unmodifiableSortedMap(copy);
        this.failedIndexes = Collections.unmodifiableSortedSet(new TreeSet<>(copy.keySet()));
    }

    /** Positions (0-based, in the list the listener received) of the messages that failed. */
    public SortedSet<Integer> failedIndexes() {
        return failedIndexes;
    }

    /**
     * What a failed message is failed with (its reason in the dead queue, what the error handler sees): its own cause
     * when one was given for its index, else the cause of this exception, else this exception.
     */
    public Throwable causeOf(int index) {
        Throwable own = causes.get(index);
        if (own != null) {
            return own;
        }
        return getCause() != null ? getCause() : this;
    }
}
