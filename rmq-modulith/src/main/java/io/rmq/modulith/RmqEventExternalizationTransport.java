package io.rmq.modulith;

import java.util.concurrent.CompletableFuture;

import io.rmq.Rmq;
import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.SendResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.RoutingTarget;
import org.springframework.modulith.events.support.EventExternalizationTransport;

/**
 * Sends the events Spring Modulith externalizes to RMQ: topic and id from the routing target
 * ({@code @Externalized("order-timeout::#{orderId()}")}), headers from the externalization configuration, timing
 * and group from {@link RmqExternalized}, the body serialized as every RMQ send serializes it. Thread-safe.
 * <p>
 * The returned future completes when Redis has accepted the message, and fails when it has not (Redis unreachable, a
 * bad routing or timing): Modulith marks the event publication completed only in the first case, so a failed send
 * stays in the registry to be re-sent ({@code IncompleteEventPublications}, or
 * {@code spring.modulith.events.republish-outstanding-events-on-restart}). A re-send carries the same id and merges
 * with the copy that is still waiting or in flight.
 * <p>
 * Sends go to the engine's producer, not through {@code RmqTemplate}: this runs after the business transaction has
 * committed, the send must reach Redis now, and its future must say whether it did, whatever transaction handling the
 * template applies.
 */
public class RmqEventExternalizationTransport implements EventExternalizationTransport {

    private static final Logger log = LoggerFactory.getLogger(RmqEventExternalizationTransport.class);

    private final Rmq rmq;
    private final EventMessages messages;

    /**
     * @param typeHeader whether each message gets the event's class name as {@code __TypeId__}, as
     *                   {@code rmq.producer.type-header} makes {@code RmqTemplate} do
     * @param beanFactory resolves {@code @bean} references in the key and {@link RmqExternalized} expressions
     */
    public RmqEventExternalizationTransport(Rmq rmq, EventExternalizationConfiguration configuration,
            BeanFactory beanFactory, boolean typeHeader) {
        StandardEvaluationContext context = new StandardEvaluationContext();
        context.setBeanResolver(new BeanFactoryResolver(beanFactory));
        this.rmq = rmq;
        this.messages = new EventMessages(configuration, rmq.topics(), context, typeHeader);
    }

    @Override
    public CompletableFuture<SendResult> externalize(Object payload, RoutingTarget target) {
        OutgoingMessage message;
        try {
            message = messages.toMessage(payload, target);
        }
        catch (RuntimeException ex) {
            log.warn("Event {} to {} not sent, its publication stays incomplete: {}", payload.getClass().getName(),
                    target, ex.getMessage());
            return CompletableFuture.failedFuture(ex);
        }
        return rmq.producer().sendAsync(message).whenComplete((result, error) -> {
            if (error != null) {
                log.warn("Event {} not sent to topic '{}' (id {}), its publication stays incomplete: {}",
                        payload.getClass().getName(), message.topic(), message.id(), error.getMessage());
            }
        });
    }
}
