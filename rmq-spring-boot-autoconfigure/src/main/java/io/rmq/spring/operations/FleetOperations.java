package io.rmq.spring.operations;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import io.rmq.Rmq;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.spring.operations.RmqOperations.InFlightPage;
import io.rmq.spring.operations.RmqOperations.InFlightView;
import io.rmq.spring.operations.RmqOperations.InstanceListenerView;
import io.rmq.spring.operations.RmqOperations.InstanceView;
import io.rmq.spring.operations.RmqOperations.OwnedSlotView;
import io.rmq.spring.operations.RmqOperations.PauseView;
import io.rmq.spring.operations.RmqOperations.Result;
import org.jspecify.annotations.Nullable;

/**
 * The fleet as Redis describes it: the live instances, the messages in flight with the instance whose handler works on
 * each, and the cluster-wide pauses of topics and listeners. Holds no state of its own (whether bodies show is read
 * from {@link RmqOperations} on every page); any request thread of the endpoint or the dashboard calls it.
 */
final class FleetOperations {

    private final Rmq rmq;
    private final RmqListenerEndpointRegistry registry;
    private final TopicLookup topics;
    private final BooleanSupplier showBodies;

    FleetOperations(Rmq rmq, RmqListenerEndpointRegistry registry, TopicLookup topics, BooleanSupplier showBodies) {
        this.rmq = rmq;
        this.registry = registry;
        this.topics = topics;
        this.showBodies = showBodies;
    }

    List<InstanceView> instances() {
        return rmq.instances().list().stream().map(i -> instanceView(i, null)).toList();
    }

    @Nullable InstanceView instance(String id) {
        io.rmq.instances.RmqInstance instance = rmq.instances().get(id);
        if (instance == null) {
            return null;
        }
        // the instance names its messages by digest: find them in their topics' prepare sets for handle, deadline
        Map<String, InFlightView> byDigest = new java.util.HashMap<>();
        for (String topic : instance.handling().stream().map(io.rmq.instances.RmqInstance.Handling::topic)
                .distinct().toList()) {
            if (topics.definition(topic) == null) {
                continue;
            }
            Map<String, io.rmq.instances.RmqInstance.Handling> mine = new java.util.HashMap<>();
            instance.handling().stream().filter(h -> h.topic().equals(topic)).forEach(h -> mine.put(h.digest(), h));
            for (io.rmq.admin.InFlightMessage m : rmq.admin().inFlightMessages(topic, 0, RmqOperations.MAX_PAGE)) {
                String digest = io.rmq.instances.RmqInstances.digest(m.member());
                io.rmq.instances.RmqInstance.Handling h = mine.get(digest);
                if (h != null) {
                    byDigest.put(topic + "\n" + digest, inFlightView(m, h, instance.id()));
                }
            }
        }
        List<InFlightView> inFlight = instance.handling().stream()
                .map(h -> byDigest.get(h.topic() + "\n" + h.digest())).filter(java.util.Objects::nonNull).toList();
        return instanceView(instance, inFlight);
    }

    private static InstanceView instanceView(io.rmq.instances.RmqInstance i, @Nullable List<InFlightView> inFlight) {
        return new InstanceView(i.id(), i.application(), i.host(), i.pid(), i.version(), i.startedAt(),
                i.lastSeenAt(), i.busy(), i.listeners().stream().map(l -> new InstanceListenerView(l.id(), l.topic(),
                        l.mode(), l.state(), l.concurrency(), l.busy(), l.pausedHere(), l.pausedCluster())).toList(),
                i.ownedSlots().stream().map(o -> new OwnedSlotView(o.topic(), o.slot())).toList(), inFlight);
    }

    /** See {@link RmqOperations#inFlight(String, long, int)}. */
    @Nullable InFlightPage inFlight(String topic, long offset, int limit) {
        if (topics.definition(topic) == null) {
            return null;
        }
        Views.checkLimit(limit);
        Views.checkOffset(offset);
        long total = rmq.admin().inFlightCount(topic);
        List<io.rmq.admin.InFlightMessage> page = rmq.admin().inFlightMessages(topic, offset, limit);
        Map<String, String> instanceByKey = new java.util.HashMap<>();
        Map<String, io.rmq.instances.RmqInstance.Handling> handlingByKey = new java.util.HashMap<>();
        if (!page.isEmpty()) {
            for (io.rmq.instances.RmqInstance i : rmq.instances().list()) {
                for (io.rmq.instances.RmqInstance.Handling h : i.handling()) {
                    if (h.topic().equals(topic)) {
                        String key = h.slot() + "\n" + h.digest();
                        instanceByKey.put(key, i.id());
                        handlingByKey.put(key, h);
                    }
                }
            }
        }
        List<InFlightView> messages = new ArrayList<>(page.size());
        for (io.rmq.admin.InFlightMessage m : page) {
            String key = m.slot() + "\n" + io.rmq.instances.RmqInstances.digest(m.member());
            messages.add(inFlightView(m, handlingByKey.get(key), instanceByKey.get(key)));
        }
        return new InFlightPage(topic, offset, limit, total, messages);
    }

    private InFlightView inFlightView(io.rmq.admin.InFlightMessage m,
            io.rmq.instances.RmqInstance.@Nullable Handling handling, @Nullable String instance) {
        return new InFlightView(m.slot(), m.id(),
                showBodies.getAsBoolean() ? new String(m.body(), StandardCharsets.UTF_8) : null,
                Base64.getEncoder().encodeToString(m.member()), handling == null ? null : handling.since(),
                m.leaseDeadlineMillis() == null ? null : Instant.ofEpochMilli(m.leaseDeadlineMillis()), instance,
                m.attempt());
    }

    List<PauseView> pauses() {
        return rmq.instances().pauses().stream().map(p -> new PauseView(p.kind(), p.name(), p.since(), p.by()))
                .toList();
    }

    @Nullable Result pauseTopicCluster(String topic, String by) {
        if (topics.definition(topic) == null) {
            return null;
        }
        return new Result("pause-cluster", topic, rmq.instances().pauseTopic(topic, by) ? 1 : 0);
    }

    @Nullable Result resumeTopicCluster(String topic) {
        if (topics.definition(topic) == null) {
            return null;
        }
        return new Result("resume-cluster", topic, rmq.instances().resumeTopic(topic) ? 1 : 0);
    }

    @Nullable Result pauseListenerCluster(String id, String by) {
        if (!knownListener(id)) {
            return null;
        }
        return new Result("pause-cluster", id, rmq.instances().pauseListener(id, by) ? 1 : 0);
    }

    @Nullable Result resumeListenerCluster(String id) {
        boolean known = knownListener(id);
        boolean lifted = rmq.instances().resumeListener(id);
        return !known && !lifted ? null : new Result("resume-cluster", id, lifted ? 1 : 0);
    }

    /** Whether a listener has this id here or on a live instance. */
    private boolean knownListener(String id) {
        return registry.getListenerContainer(id) != null || rmq.instances().list().stream()
                .anyMatch(i -> i.listeners().stream().anyMatch(l -> l.id().equals(id)));
    }
}
