package io.rmq.container.internal;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.container.internal.PollerEvents.Members;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which slots a CONCURRENT container prefers, so that the containers of one topic (in one process or many) do not
 * all pop every slot: each prefers a disjoint share and takes from the others' slots only when its own have nothing
 * due (work stealing, see {@link SlotSchedule#dueSlots}). Threads: the poller thread owns all of it; heartbeat replies
 * reach it as {@link Members} events; only {@link #preferred}, a copy, is read by others (tests, logs).
 * <p>
 * Membership: the engine's one heartbeat for all its containers ({@link io.rmq.redis.internal.ConsumerRoster},
 * every half of the shortest membership timeout among them) lists this container until Redis's now + the timeout and
 * answers it with the topic's live list; a container whose engine stops beating (killed, frozen, cut off) drops out
 * of it after the timeout, one that stops or pauses leaves at once. The timeout is the listener's
 * {@code ownershipTimeout}.
 * <p>
 * Shares: rendezvous (highest random weight) hashing of (member, slot) over the live list, so every container computes
 * the same owner per slot, and a join or a leave moves only the slots the joining or leaving one wins or held.
 * Invariants:
 * <ol>
 * <li>Without a current membership (none yet, the last heartbeat failed, a one-slot topic, or this container not in
 * the list) every slot is its own: it serves the topic as if it were alone, as containers did before shares.</li>
 * <li>A foreign slot (another member's) is popped only when none of the container's own slots is due or has a pop
 * under way, and only {@link #stealDelay} after it was known due: the owner, which acts at once, gets there first.
 * An empty steal doubles that delay for the slot (up to {@link #MAX_STEAL_DELAY_MILLIS}), so a keeping-up owner
 * costs its peers at most a pop per slot every that long; a steal that brings a full page clears it (the owner is
 * behind: take again as soon as the container has room).</li>
 * <li>The idle check ({@code maxIdle}) still looks at every slot, own and foreign, and pops the occupied ones: a dead
 * owner's messages are found within the membership timeout (its share becomes the others' own, each newly won slot
 * polled at once) or {@code maxIdle}, whichever comes first.</li>
 * </ol>
 */
final class SlotShares {

    private static final Logger log = LoggerFactory.getLogger(ContainerLoggers.CONCURRENT);

    /** How long after a foreign slot is known due it may be stolen, at first (its owner acts at once). */
    static final long STEAL_DELAY_MILLIS = 100;
    /** The longest delay before stealing a slot whose steals keep finding nothing (its owner keeps up). */
    static final long MAX_STEAL_DELAY_MILLIS = 2000;

    private final SlotConsumer consumer;
    private final String id;
    private final String topic;
    private final PollerEvents events;
    private final long ttlMillis;

    /** This start's member id among the topic's consumers: unique by construction (a fresh UUID per start). */
    private String memberId;
    /** Per slot: this container's own (preferred); all true without a membership. */
    private boolean[] own;
    /** Per foreign slot: ms after its known due time before it may be stolen. */
    private long[] stealDelay;
    /** The live members the shares were computed from (sorted), or null without a membership. */
    private List<String> members;
    /** Whether this container is listed (it beat and did not leave since). */
    private boolean joined;
    /** A copy of the own slots, written by the poller whenever they change. */
    private volatile int[] preferred = new int[0];
    /** How many live members the current shares were computed from (0 without a membership), for tests and views. */
    private volatile int liveMembers;

    SlotShares(SlotConsumer consumer, String id, PollerEvents events, long ttlMillis) {
        this.consumer = consumer;
        this.id = id;
        this.topic = consumer.topic().name();
        this.events = events;
        this.ttlMillis = ttlMillis;
    }

    /** A new run: every slot its own until the first heartbeat answers (sent at the poller's first pass). */
    void start(int slots) {
        memberId = id + "@" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
        setOwn(allTrue(slots));
        stealDelay = new long[slots];
        Arrays.fill(stealDelay, STEAL_DELAY_MILLIS);
        members = null;
        liveMembers = 0;
        joined = false;
    }

    String memberId() {
        return memberId;
    }

    boolean mine(int slot) {
        return own[slot];
    }

    /** The slots this container prefers now (any thread). */
    int[] preferred() {
        return preferred.clone();
    }

    /** How many consumers the current shares were computed from; 0 without a membership (any thread). */
    int liveMembers() {
        return liveMembers;
    }

    private void setOwn(boolean[] slots) {
        own = slots;
        preferred = java.util.stream.IntStream.range(0, slots.length).filter(s -> slots[s]).toArray();
    }

    long stealDelay(int slot) {
        return stealDelay[slot];
    }

    /**
     * Joins the topic's consumers on the first pass after a start or a resume (the engine's heartbeat then lists
     * this container and answers it after every beat, see {@link io.rmq.redis.internal.ConsumerRoster}), or leaves
     * while {@code paused}, so that the others take this container's share over at once. Returns the local ms of the
     * next thing to do here: never (Long.MAX_VALUE), the answers come as events.
     */
    long beat(long now, boolean paused) {
        if (own.length < 2) {
            return Long.MAX_VALUE; // one slot: nothing to share
        }
        if (paused) {
            if (joined) {
                leave(); // the others take this share over at their next beat
                setOwn(allTrue(own.length)); // resumed: every slot, until the next beat answers
                members = null;
            }
            return Long.MAX_VALUE;
        }
        if (!joined) {
            joined = true;
            String member = memberId;
            try {
                consumer.joinShares(member, ttlMillis, (live, error) -> events.post(new Members(member, live, error)));
            }
            catch (RuntimeException ex) {
                events.post(new Members(member, null, ex));
            }
        }
        return Long.MAX_VALUE;
    }

    /** Leaves the topic's consumers (stop, pause); not waited for: a lost leave ages out with the timeout. */
    void leave() {
        if (!joined || own.length < 2) {
            return;
        }
        joined = false;
        try {
            consumer.leaveShares(memberId);
        }
        catch (RuntimeException ex) {
            log.debug("RMQ listener container '{}' could not leave the consumers of topic '{}': {}", id, topic,
                    String.valueOf(ex));
        }
    }

    /**
     * A heartbeat's answer: recomputes the shares. Returns the slots this container has just won (the schedule polls
     * them at once: their owner may have died with messages due), or an empty array.
     */
    int[] membersAnswered(Members answer) {
        if (!joined || !answer.memberId().equals(memberId)) {
            return new int[0]; // an answer for an earlier run, or one that came after a leave
        }
        List<String> live = answer.live() == null ? null : answer.live().stream().sorted().distinct().toList();
        if (live == null || !live.contains(memberId)) {
            if (answer.error() != null && members != null) {
                log.debug("RMQ listener container '{}': heartbeat among the consumers of topic '{}' failed; polling"
                        + " every slot until it answers: {}", id, topic, String.valueOf(answer.error()));
            }
            live = null; // no membership: every slot is its own (invariant 1)
        }
        if (live != null && live.equals(members)) {
            return new int[0];
        }
        boolean[] before = own;
        setOwn(live == null ? allTrue(before.length) : shares(live, memberId, before.length));
        if (live != null || members != null) {
            log.debug("RMQ listener container '{}' prefers {} of the {} slots of topic '{}' ({} consumer(s))", id,
                    count(own), own.length, topic, live == null ? "no membership:" : live.size());
        }
        members = live;
        liveMembers = live == null ? 0 : live.size();
        int[] won = new int[own.length];
        int count = 0;
        for (int slot = 0; slot < own.length; slot++) {
            if (own[slot] && !before[slot]) {
                won[count++] = slot;
            }
            if (own[slot]) {
                stealDelay[slot] = STEAL_DELAY_MILLIS;
            }
        }
        return Arrays.copyOf(won, count);
    }

    /** A steal of foreign {@code slot} brought {@code got} of the {@code asked} messages: how soon to steal again. */
    void stole(int slot, int got, int asked) {
        if (own[slot]) {
            return;
        }
        if (got >= asked) {
            stealDelay[slot] = 0; // its owner is behind: take whenever there is room
        }
        else if (got > 0) {
            stealDelay[slot] = STEAL_DELAY_MILLIS;
        }
        else {
            stealDelay[slot] = Math.min(MAX_STEAL_DELAY_MILLIS, Math.max(STEAL_DELAY_MILLIS, 2 * stealDelay[slot]));
        }
    }

    /**
     * Rendezvous hashing: each slot goes to the member with the highest weight for (member, slot); the same on every
     * container for the same list, and a member's arrival or departure moves only the slots it wins or held.
     */
    static boolean[] shares(List<String> members, String me, int slots) {
        boolean[] mine = new boolean[slots];
        long[] memberHashes = new long[members.size()];
        for (int i = 0; i < memberHashes.length; i++) {
            memberHashes[i] = fnv1a(members.get(i));
        }
        for (int slot = 0; slot < slots; slot++) {
            int best = -1;
            long bestWeight = 0;
            for (int i = 0; i < memberHashes.length; i++) {
                long weight = mix(memberHashes[i] ^ (slot + 1) * 0x9E3779B97F4A7C15L);
                // ties (never seen in practice) go to the smaller id, so every container decides alike
                if (best < 0 || Long.compareUnsigned(weight, bestWeight) > 0
                        || weight == bestWeight && members.get(i).compareTo(members.get(best)) < 0) {
                    best = i;
                    bestWeight = weight;
                }
            }
            mine[slot] = members.get(best).equals(me);
        }
        return mine;
    }

    private static long fnv1a(String s) {
        long hash = 0xcbf29ce484222325L;
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            hash ^= b & 0xff;
            hash *= 0x100000001b3L;
        }
        return hash;
    }

    /** splitmix64's finaliser: spreads close inputs over the whole range. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    private static boolean[] allTrue(int slots) {
        boolean[] all = new boolean[slots];
        Arrays.fill(all, true);
        return all;
    }

    private static int count(boolean[] flags) {
        int n = 0;
        for (boolean f : flags) {
            n += f ? 1 : 0;
        }
        return n;
    }
}
