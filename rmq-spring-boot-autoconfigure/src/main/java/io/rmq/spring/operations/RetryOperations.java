package io.rmq.spring.operations;

import java.util.List;
import java.util.function.BooleanSupplier;

import io.rmq.Rmq;
import io.rmq.spring.operations.RmqOperations.RetriesPage;
import io.rmq.spring.operations.RmqOperations.RetryView;

/**
 * Failed messages waiting out their backoff before the next attempt, page by page. Holds no state of its own (whether
 * bodies show is read from {@link RmqOperations} on every page); any request thread of the endpoint or the dashboard
 * calls it.
 */
final class RetryOperations {

    private final Rmq rmq;
    private final TopicLookup topics;
    private final BooleanSupplier showBodies;

    RetryOperations(Rmq rmq, TopicLookup topics, BooleanSupplier showBodies) {
        this.rmq = rmq;
        this.topics = topics;
        this.showBodies = showBodies;
    }

    RetriesPage retries(String topic, long offset, int limit) {
        topics.required(topic);
        Views.checkLimit(limit);
        Views.checkOffset(offset);
        io.rmq.admin.RetryPage page = rmq.admin().retries(topic, offset, limit);
        boolean bodies = showBodies.getAsBoolean();
        List<RetryView> messages = page.messages().stream().map(m -> new RetryView(m.slot(), m.id(),
                bodies ? m.bodyAsString() : null, Views.handle(m.ref()), m.attempts(), m.nextAttemptAt(),
                m.lastError(), m.failedAt())).toList();
        return new RetriesPage(topic, offset, limit, page.total(), page.capped(), messages);
    }
}
