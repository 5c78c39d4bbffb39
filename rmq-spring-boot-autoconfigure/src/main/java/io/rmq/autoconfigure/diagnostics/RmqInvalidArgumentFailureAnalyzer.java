package io.rmq.autoconfigure.diagnostics;

import io.rmq.core.RmqInvalidArgumentException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Bad input to RMQ at start-up that is not an {@code rmq.*} property (those are
 * {@link InvalidRmqPropertyFailureAnalyzer}'s): a value the application's code passes, e.g. to Rmq.defineTopic.
 */
@Order(Ordered.HIGHEST_PRECEDENCE + 30)
public class RmqInvalidArgumentFailureAnalyzer extends AbstractFailureAnalyzer<RmqInvalidArgumentException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RmqInvalidArgumentException cause) {
        return new FailureAnalysis("Invalid RMQ input:\n\n    Field: " + cause.getField() + "\n    Value: "
                + cause.getValue() + "\n    Rule:  " + cause.getRule() + "\n",
                "Correct the value of " + cause.getField() + " where the application sets it.", cause);
    }
}
