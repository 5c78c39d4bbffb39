package io.rmq.consumer;

import java.util.List;

import io.rmq.core.TopicDefinition;
import org.jspecify.annotations.Nullable;

/**
 * How a consumer treats failures, beyond its retry policy.
 *
 * @param noRetryFor      exception types (and their subtypes) that go to the dead queue at once, found anywhere in the
 *                        cause chain of what the handler threw ({@link RmqNonRetryableException} always is)
 * @param errorHandler    decides per failure, or null (the standard decision)
 * @param deadLetterTopic a topic that receives the messages that die here (body, id, group and headers, with the
 *                        story of their death as {@code rmq_dlt_*} headers; never refused for a size), and they leave
 *                        this topic's dead queue once sent there, so a listener of that topic can build its own
 *                        recovery; null: dead messages stay in the dead queue
 */
public record FailurePolicy(List<Class<? extends Throwable>> noRetryFor, @Nullable RmqErrorHandler errorHandler,
        @Nullable String deadLetterTopic) {

    public static final FailurePolicy DEFAULT = new FailurePolicy(List.of(), null, null);

    public FailurePolicy {
        noRetryFor = noRetryFor == null ? List.of() : List.copyOf(noRetryFor);
        if (deadLetterTopic != null) {
            TopicDefinition.validateName(deadLetterTopic);
        }
    }

    public FailurePolicy withNoRetryFor(List<Class<? extends Throwable>> noRetryFor) {
        return new FailurePolicy(noRetryFor, errorHandler, deadLetterTopic);
    }

    public FailurePolicy withErrorHandler(@Nullable RmqErrorHandler errorHandler) {
        return new FailurePolicy(noRetryFor, errorHandler, deadLetterTopic);
    }

    public FailurePolicy withDeadLetterTopic(@Nullable String deadLetterTopic) {
        return new FailurePolicy(noRetryFor, errorHandler, deadLetterTopic);
    }

    /** Whether the error, or any of its causes, is non-retryable. */
    public boolean nonRetryable(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof RmqNonRetryableException) {
                return true;
            }
            for (Class<? extends Throwable> type : noRetryFor) {
                if (type.isInstance(t)) {
                    return true;
                }
            }
        }
        return false;
    }
}
