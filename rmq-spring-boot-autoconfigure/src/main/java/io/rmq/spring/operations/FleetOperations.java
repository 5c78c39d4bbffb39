package io.rmq.spring.operations;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

import io.rmq.Rmq;
import io.rmq.admin.InFlightMessage;
import io.rmq.instances.RmqInstance;
import io.rmq.instances.RmqInstances;
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
 * The fleet as Redis describes it: the live instances (each as of its latest report, with that report's age), the
 * messages in flight with the instance that holds each (by the instances' reports: a handler works on it, it waits in
 * a buffer, or its ORDERLY slot is owned), and the cluster-wide pauses of topics and listeners. Holds no state of its own (whether bodies show is read
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
        RmqInstance instance = rmq.instances().get(id);
        if (instance == null) {
            return null;
        }
        // the instance names what it holds by digest: find each in its topic's prepare set for handle and deadline
        Holders holders = new Holders();
        holders.add(instance);
        List<InFlightView> inFlight = new ArrayList<>();
        for (String topic : holders.topics()) {
            if (topics.definition(topic) == null) {
                continue;
            }
            for (InFlightMessage m : rmq.admin().inFlightMessages(topic, 0, RmqOperations.MAX_PAGE)) {
                Holder holder = holders.of(topic, m);
                if (holder != null && !holder.kind().equals(OWNER)) {
                    inFlight.add(inFlightView(m, holder));
                }
            }
        }
        return instanceView(instance, inFlight);
    }

    private static InstanceView instanceView(RmqInstance i, @Nullable List<InFlightView> inFlight) {
        return new InstanceView(i.id(), i.application(), i.host(), i.pid(), i.version(), i.startedAt(),
                i.lastSeenAt(), i.busy(), i.listeners().stream().map(l -> new InstanceListenerView(l.id(), l.topic(),
                        l.mode(), l.state(), l.concurrency(), l.busy(), l.pausedHere(), l.pausedCluster())).toList(),
                i.ownedSlots().stream().map(o -> new OwnedSlotView(o.topic(), o.slot())).toList(), inFlight,
                i.reportAge().toMillis(), i.prefetched().size());
    }

    /** See {@link RmqOperations#inFlight(String, long, int)}. */
    @Nullable InFlightPage inFlight(String topic, long offset, int limit) {
        if (topics.definition(topic) == null) {
            return null;
        }
        Views.checkLimit(limit);
        Views.checkOffset(offset);
        long total = rmq.admin().inFlightCount(topic);
        List<InFlightMessage> page = rmq.admin().inFlightMessages(topic, offset, limit);
        Holders holders = new Holders();
        if (!page.isEmpty()) {
            rmq.instances().list().forEach(holders::add);
        }
        List<InFlightView> messages = new ArrayList<>(page.size());
        for (InFlightMessage m : page) {
            messages.add(inFlightView(m, holders.of(topic, m)));
        }
        return new InFlightPage(topic, offset, limit, total, messages);
    }

    private InFlightView inFlightView(InFlightMessage m, @Nullable Holder holder) {
        return new InFlightView(m.slot(), m.id(),
                showBodies.getAsBoolean() ? new String(m.body(), StandardCharsets.UTF_8) : null,
                Base64.getEncoder().encodeToString(m.member()), holder == null ? null : holder.since(),
                m.leaseDeadlineMillis() == null ? null : Instant.ofEpochMilli(m.leaseDeadlineMillis()),
                holder == null ? null : holder.instance(), m.attempt(), holder == null ? null : holder.kind(),
                holder == null ? null : holder.reportAgeMillis());
    }

    private static final String HANDLER = "handler";
    private static final String PREFETCHED = "prefetched";
    private static final String OWNER = "owner";

    /** Who holds a message in flight, by an instance's report. */
    private record Holder(String instance, String kind, @Nullable Instant since, long reportAgeMillis) {
    }

    /**
     * What the instances' reports say they hold, by topic, slot and member digest; an ORDERLY slot's messages are its
     * owner's. No per-message bookkeeping in Redis: the reports are the instances' heartbeats, each at most one
     * heartbeat old, so a message fetched after its holder's latest report is named by none (until the next).
     */
    private static final class Holders {

        private final Map<String, Holder> byMessage = new HashMap<>();
        private final Map<String, Holder> byOwnedSlot = new HashMap<>();
        private final Set<String> topics = new LinkedHashSet<>();

        void add(RmqInstance i) {
            long age = i.reportAge().toMillis();
            for (RmqInstance.Handling h : i.handling()) {
                byMessage.put(key(h.topic(), h.slot(), h.digest()), new Holder(i.id(), HANDLER, h.since(), age));
                topics.add(h.topic());
            }
            for (RmqInstance.Prefetched p : i.prefetched()) {
                byMessage.putIfAbsent(key(p.topic(), p.slot(), p.digest()), new Holder(i.id(), PREFETCHED, null, age));
                topics.add(p.topic());
            }
            for (RmqInstance.OwnedSlot o : i.ownedSlots()) {
                byOwnedSlot.put(o.topic() + "\n" + o.slot(), new Holder(i.id(), OWNER, null, age));
            }
        }

        Set<String> topics() {
            return topics;
        }

        @Nullable Holder of(String topic, InFlightMessage m) {
            Holder named = byMessage.get(key(topic, m.slot(), RmqInstances.digest(m.member())));
            return named != null ? named : byOwnedSlot.get(topic + "\n" + m.slot());
        }

        private static String key(String topic, int slot, String digest) {
            return topic + "\n" + slot + "\n" + digest;
        }
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
