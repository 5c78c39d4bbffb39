package io.rmq.core.internal;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import io.rmq.core.TopicDefinition;
import io.rmq.core.RmqInvalidArgumentException;

/**
 * The Redis key layout (a contract: operators and other-language clients rely on it). All keys of one slot share
 * the hash tag {@code {<topic>:<slot>}} so every script touches a single Redis Cluster slot.
 *
 * A message's <em>member</em> (its identity in the ZSETs, HASHes and SETs below) is its serialized body, or, for a
 * message sent with an id, the byte {@code 0xFF} followed by the id's UTF-8 bytes ({@code 0xFF} never occurs in UTF-8,
 * so no text body can look like an id).
 *
 * <pre>
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:store       ZSET member=body score=due time (ms) or priority
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:prepare     ZSET member=body score=lease token: lease deadline (ms) + k/1024, unique per delivery
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:dead        ZSET member=body score=time it died (ms)
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:attempts    HASH body -&gt; failed attempts so far (only bodies that failed or are in flight after a failure)
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:dead-info   HASH body -&gt; "attempts\npriority\nlast error" (dead bodies only)
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:retry       ZSET (PRIORITY topics) body -&gt; time its backoff ends
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:priority    HASH (PRIORITY topics) body -&gt; priority, while in flight or backing off
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:owner       HASH (ORDERLY, while owned) id, epoch (fencing token), until (Redis ms; 2^53-1 when
 *                                         leased by the membership), listed (leased: Redis ms of the live list the
 *                                         holder claimed with), decided
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:cancelled   SET  bodies cancelled while in flight: dropped when that delivery ends unacked
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:context     HASH (legacy, read only) body -&gt; trace context written by engines before envelopes
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:msg         HASH envelope key -&gt; envelope (payload of an id message, headers, trace context)
 *                                         while any copy of the member is in store, prepare, retry or dead
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:trace       HASH compact trace records of bodies whose envelope is a trace context alone, kept
 *                                         as msg keeps envelopes (a HASH of their own: a pop of a slot without ids or
 *                                         headers looks up nothing in msg, and consumers read these records themselves)
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:errors      HASH body -&gt; "failed at (Redis ms)\nlast error" of a failed attempt, while the
 *                                         body still has an attempt count (written by failures only; the ack forgets it)
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:expiry      ZSET member -&gt; expires at (Redis ms), messages sent with an expiry, while a copy waits
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:dedupe      ZSET identity (id member, or a body's envelope key) -&gt; -window ms while a message sent
 *                                         with a deduplication window is in the slot, then the end of its window (Redis
 *                                         ms) once handled; the key expires with its last window
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:lease-seq   STRING the last lease token the slot issued (expires just after its deadline)
 * &lt;prefix&gt;:{&lt;topic&gt;:&lt;slot&gt;}:skipped     SET  bodies pops found in flight while a duplicate waited in store
 * &lt;prefix&gt;:{&lt;topic&gt;}:members          ZSET (ORDERLY, Redis coordinator) instance id -&gt; alive until (Redis ms); the
 *                                         lease of every owner key its instance holds (leased keys carry no deadline)
 * &lt;prefix&gt;:{&lt;topic&gt;}:rate             HASH (rate-limited topics) token bucket: tokens, at
 * &lt;prefix&gt;:topics                       HASH topic -&gt; "TYPE:slotAmount[:MODE]" (MODE: consume mode)
 * &lt;prefix&gt;:{rmq-schedules}:&lt;name&gt;   HASH a periodic schedule's definition, latest firing taken, pause, latest outcome
 * &lt;prefix&gt;:{rmq-instances}:live       ZSET running instance id -&gt; alive until (Redis ms)
 * &lt;prefix&gt;:{rmq-instances}:&lt;id&gt;       STRING an instance's description (JSON), expiring with its entry in live
 * &lt;prefix&gt;:{rmq-instances}:paused     HASH "listener:&lt;id&gt;" / "topic:&lt;name&gt;" -&gt; "&lt;since ms&gt;|&lt;by&gt;": cluster-wide pauses
 * &lt;prefix&gt;:{rmq-replies:&lt;inbox&gt;}     LIST replies to a requester's requests, until it takes them; expires a bounded time
 *                                         after its last reply (see reply.lua)
 * &lt;prefix&gt;:{rmq-history}:&lt;topic&gt;    HASH a topic's counts per minute (last 61) and hour (last 25): sent, handled,
 *                                         failed, dead (see history_flush.lua)
 * </pre>
 */
public final class RmqKeys {

    public static final String DEFAULT_PREFIX = "rmq";

    private static final String[] SUFFIXES = {"store", "prepare", "dead", "attempts", "dead-info", "retry", "priority", "owner", "cancelled",
            "context", "msg", "trace", "errors", "expiry", "dedupe"};
    /** Passed, after the others, only to the scripts that issue lease tokens (pop, extend). */
    private static final String LEASE_SEQ = "lease-seq";
    /**
     * Passed after the lease-seq key to the scripts that lease or settle CONCURRENT deliveries (pop, extend, ack, nack,
     * release, sweep): the bodies pops found in flight while a duplicate of theirs waited in store.
     */
    private static final String SKIPPED = "skipped";

    private final String prefix;
    /** Slot keys per topic name (they depend on the name and the slot amount only). */
    private final Map<String, SlotKeys[]> slotsByTopic = new ConcurrentHashMap<>();

    public RmqKeys(String prefix) {
        if (prefix == null || prefix.isEmpty() || prefix.contains("{") || prefix.contains("}")) {
            throw new RmqInvalidArgumentException("key prefix", prefix, "must be non-empty and contain no braces");
        }
        this.prefix = prefix;
    }

    public String prefix() {
        return prefix;
    }

    public byte[] topics() {
        return bytes(prefix + ":topics");
    }

    /** The live ORDERLY consumers of a topic (Redis coordinator). */
    public byte[] members(String topic) {
        return bytes(prefix + ":{" + topic + "}:members");
    }

    /**
     * The engines whose CONCURRENT containers share slots, each alive until a Redis ms (consumers_beat.lua): one
     * heartbeat per engine renews all its containers, under one hash tag so that one script call does it on a cluster.
     */
    public byte[] consumersLive() {
        return bytes(prefix + ":{rmq-consumers}:live");
    }

    /** Per engine, its CONCURRENT containers that share slots: "&lt;topic&gt;\t&lt;member id&gt;" lines. */
    public byte[] consumersMembers() {
        return bytes(prefix + ":{rmq-consumers}:members");
    }

    /**
     * The state of a periodic schedule (see docs/scheduling.md): one hash per schedule, all under one hash tag, so that
     * a cluster keeps them on one node and each script touches one slot.
     */
    public byte[] schedule(String name) {
        return bytes(prefix + ":{rmq-schedules}:" + name);
    }

    /**
     * The running instances (see docs/operations.md): the live list, each instance's description and the
     * cluster-wide pauses, all under one hash tag so that one script does a heartbeat on a cluster.
     */
    public byte[] instancesLive() {
        return bytes(prefix + ":{rmq-instances}:live");
    }

    /** One instance's description (instance ids are made of letters, digits, '.', '_' and '-'). */
    public byte[] instance(String id) {
        return bytes(prefix + ":{rmq-instances}:" + id);
    }

    /** The cluster-wide pauses of listeners and topics. */
    public byte[] instancesPaused() {
        return bytes(prefix + ":{rmq-instances}:paused");
    }

    /**
     * The queue-size gauges a fleet shares (see gauges.lua): per topic the figures an instance read last, and whose
     * turn the next read is; under one hash tag, so that one script call serves every topic, also on a cluster.
     */
    public byte[] gaugeSizes() {
        return bytes(prefix + ":{rmq-gauges}:sizes");
    }

    /** Per topic, until when the turn an instance took to read its queue sizes counts (see gauges.lua). */
    public byte[] gaugeTurns() {
        return bytes(prefix + ":{rmq-gauges}:turns");
    }

    /**
     * The history of a topic (counts per minute and per hour): one hash per topic, all under one hash tag, so that one
     * script call flushes every topic's counts, also on a cluster.
     */
    public byte[] history(String topic) {
        return bytes(prefix + ":{rmq-history}:" + topic);
    }

    /**
     * A requester's reply inbox (see {@code RmqReplies}): a LIST of the replies to its requests, under a hash tag of
     * its own (inboxes spread over a cluster's masters); it expires a bounded time after its last reply.
     */
    public byte[] replyInbox(String inboxId) {
        return bytes(prefix + ":{rmq-replies:" + inboxId + "}");
    }

    /** The token bucket of a rate-limited topic. */
    public byte[] rate(String topic) {
        return bytes(prefix + ":{" + topic + "}:rate");
    }

    /** The keys of one slot, in the fixed order the Lua scripts expect (see each script's header). */
    public SlotKeys slot(String topic, int slot) {
        String base = prefix + ":{" + topic + ":" + slot + "}:";
        byte[][] leasing = new byte[SUFFIXES.length + 2][];
        for (int i = 0; i < SUFFIXES.length; i++) {
            leasing[i] = bytes(base + SUFFIXES[i]);
        }
        leasing[SUFFIXES.length] = bytes(base + LEASE_SEQ);
        leasing[SUFFIXES.length + 1] = bytes(base + SKIPPED);
        return new SlotKeys(topic, slot, Arrays.copyOf(leasing, SUFFIXES.length), leasing);
    }

    /** The keys of every slot of a topic, indexed by slot (cached). */
    public SlotKeys[] slots(TopicDefinition topic) {
        // looked up per message sent: keyed by the name (its hash is cached), not by the record (whose hashCode
        // and equals go through method handles, costly on the producing thread)
        SlotKeys[] cached = slotsByTopic.get(topic.name());
        if (cached != null && cached.length == topic.slotAmount()) {
            return cached;
        }
        SlotKeys[] all = new SlotKeys[topic.slotAmount()];
        for (int i = 0; i < all.length; i++) {
            all[i] = slot(topic.name(), i);
        }
        slotsByTopic.put(topic.name(), all);
        return all;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The keys of one slot. Arrays are shared: do not modify.
     *
     * @param all     the keys every slot script gets (KEYS[1..13])
     * @param leasing {@code all} followed by the lease-seq and skipped keys: for the scripts that issue lease tokens
     *                or settle CONCURRENT deliveries (pop, extend, ack, nack, release, sweep)
     */
    public record SlotKeys(String topic, int slot, byte[][] all, byte[][] leasing) {

        public byte[] store() {
            return all[0];
        }

        public byte[] prepare() {
            return all[1];
        }

        public byte[] dead() {
            return all[2];
        }

        public byte[] attempts() {
            return all[3];
        }

        public byte[] deadInfo() {
            return all[4];
        }

        public byte[] retry() {
            return all[5];
        }

        public byte[] priority() {
            return all[6];
        }

        public byte[] owner() {
            return all[7];
        }

        public byte[] cancelled() {
            return all[8];
        }

        /**
         * Legacy, read only: the trace contexts that engines before message envelopes stored beside the slot's bodies
         * (body -&gt; encoded context). Read and forgotten with their messages; never written.
         */
        public byte[] context() {
            return all[9];
        }

        /**
         * The envelopes of the slot's messages that have an id or headers: envelope key -&gt; envelope (see
         * {@code Envelope} and {@code EnvelopeKeys}).
         */
        public byte[] msg() {
            return all[10];
        }

        /**
         * The compact trace records of the slot's bodies whose envelope is a trace context alone (see
         * {@code EnvelopeKeys#traceRecord}).
         */
        public byte[] trace() {
            return all[11];
        }

        /**
         * When and why a body's latest attempt failed ("failed at ms\nlast error"), kept while it has an attempt
         * count (see note_error in _common.lua); absent for failures recorded by engines before it existed.
         */
        public byte[] errors() {
            return all[12];
        }

        /**
         * When the slot's messages sent with an expiry expire: member -&gt; Redis ms (see send.lua and expire_due in
         * _common.lua); only while a copy of the member is in the slot.
         */
        public byte[] expiry() {
            return all[13];
        }

        /**
         * The slot's deduplication windows (see send.lua and start_windows in _common.lua): a message's identity (its id
         * member, or a body's envelope key) -&gt; minus its window in ms while the message waits, then the Redis ms its
         * window ends once it was handled; the key's TTL ends with its last window.
         */
        public byte[] dedupe() {
            return all[14];
        }

        public byte[] leaseSeq() {
            return leasing[15];
        }

        /** The bodies pops found in flight while a duplicate waited in store (see pop.lua and ack.lua). */
        public byte[] skipped() {
            return leasing[16];
        }
    }
}
