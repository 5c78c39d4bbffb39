package io.rmq.spring.operations;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.rmq.Rmq;
import io.rmq.admin.TopicHistory;
import io.rmq.admin.TopicStats;
import io.rmq.core.TopicDefinition;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.spring.listener.RmqListenerState;
import io.rmq.spring.operations.RmqOperations.HistoryView;
import io.rmq.spring.operations.RmqOperations.ListenerView;
import io.rmq.spring.operations.RmqOperations.Overview;
import io.rmq.spring.operations.RmqOperations.SlotView;
import io.rmq.spring.operations.RmqOperations.TopicView;
import org.jspecify.annotations.Nullable;

/**
 * Topics with their figures and history, and this instance's listeners with their own pause: the overview of
 * {@link RmqOperations}. Holds no state of its own; any request thread of the endpoint or the dashboard calls it.
 */
final class TopicOperations {

    private final Rmq rmq;
    private final RmqListenerEndpointRegistry registry;
    private final TopicLookup topics;

    TopicOperations(Rmq rmq, RmqListenerEndpointRegistry registry, TopicLookup topics) {
        this.rmq = rmq;
        this.registry = registry;
        this.topics = topics;
    }

    /** The overview of {@code definitions} and {@code listeners} (the facade's, so that a subclass's answers count). */
    Overview overview(Map<String, TopicDefinition> definitions, List<ListenerView> listeners) {
        List<TopicView> views = new ArrayList<>();
        for (TopicDefinition topic : definitions.values()) {
            views.add(topicView(topic, false));
        }
        return new Overview(List.copyOf(views), listeners);
    }

    @Nullable TopicView topic(String name) {
        TopicDefinition topic = topics.definition(name);
        return topic == null ? null : topicView(topic, true);
    }

    private TopicView topicView(TopicDefinition topic, boolean perSlot) {
        TopicStats stats = rmq.admin().stats(topic.name());
        List<SlotView> slots = null;
        if (perSlot) {
            slots = stats.slots().stream().map(s -> new SlotView(s.slot(), s.waiting(), s.inFlight(), s.retrying(),
                    s.dead())).toList();
        }
        return new TopicView(topic.name(), topic.type(), topic.slotAmount(),
                topic.mode() == null ? null : topic.mode().name(), stats.waiting(), stats.inFlight(), stats.retrying(),
                stats.dead(), stats.oldestDue(), slots);
    }

    /** See {@link RmqOperations#history(String, String)}. */
    @Nullable HistoryView history(String topic, @Nullable String resolution) {
        TopicHistory.Resolution r = TopicHistory.Resolution.parse(resolution == null || resolution.isBlank()
                ? "minute" : resolution);
        if (topics.definition(topic) == null) {
            return null;
        }
        TopicHistory history = rmq.admin().history(topic, r);
        return new HistoryView(history.topic(), r.label(), history.from(), history.to(), history.points());
    }

    List<ListenerView> listeners() {
        return registry.getListenerStates().stream().map(this::listenerView).toList();
    }

    @Nullable ListenerView listener(String id) {
        return registry.getListenerContainer(id) == null ? null : listenerView(registry.getListenerState(id));
    }

    private ListenerView listenerView(RmqListenerState s) {
        io.rmq.container.ListenerContainer container = registry.getListenerContainer(s.id());
        return new ListenerView(s.id(), s.topic(), s.mode().name(), s.status().name().toLowerCase(Locale.ROOT),
                s.concurrency(), List.copyOf(s.ownedSlots()), List.copyOf(s.suspendedSlots()), s.stallsRepaired(),
                container != null && container.isPausedHere(), container != null && container.isPausedCluster());
    }

    /** Pauses the listener; false when there is none with this id. */
    boolean pause(String id) {
        if (registry.getListenerContainer(id) == null) {
            return false;
        }
        registry.pause(id);
        rmq.instances().reportSoon(); // the registry shows the new state now, not one heartbeat later
        return true;
    }

    /** Resumes the listener; false when there is none with this id. */
    boolean resume(String id) {
        if (registry.getListenerContainer(id) == null) {
            return false;
        }
        registry.resume(id);
        rmq.instances().reportSoon();
        return true;
    }
}
