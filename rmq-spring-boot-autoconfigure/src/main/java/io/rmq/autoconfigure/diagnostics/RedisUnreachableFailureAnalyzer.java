package io.rmq.autoconfigure.diagnostics;

import io.rmq.autoconfigure.RedisUnreachableException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/** Redis down at start-up while {@code rmq.startup.fail-fast=true}. */
@Order(Ordered.HIGHEST_PRECEDENCE + 40)
public class RedisUnreachableFailureAnalyzer extends AbstractFailureAnalyzer<RedisUnreachableException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RedisUnreachableException cause) {
        return new FailureAnalysis("RMQ could not reach Redis at start-up (rmq.startup.fail-fast=true):\n\n"
                + "    Redis:  " + cause.getAddress() + " (spring.data.redis.*)\n    Reason: " + cause.getReason() + "\n",
                "Start Redis, or correct spring.data.redis.* (host and port, url, cluster.nodes, sentinel.*, ssl,"
                        + " username and password). To let the application start while Redis is down, set"
                        + " rmq.startup.fail-fast=false (the default): listeners then wait and begin consuming once"
                        + " Redis is reachable, and sends fail at once with RmqUnavailableException until then.",
                cause);
    }
}
