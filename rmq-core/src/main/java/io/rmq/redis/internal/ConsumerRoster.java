package io.rmq.redis.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;

import io.lettuce.core.ScriptOutputType;
import io.rmq.core.internal.RmqKeys;
import io.rmq.core.internal.Timeouts;
import org.jspecify.annotations.Nullable;

/**
 * Not API (RMQ's internal Redis layer, changed without notice). The consumers of one engine that Redis must know alive
 * — its CONCURRENT containers that share their topics' slots (the containers' {@code SlotShares}) and the memberships of
 * its ORDERLY containers (the lease of their slots, {@code RedisSlotCoordinator}) — listed in Redis by one heartbeat for
 * the whole engine (consumers_beat.lua) instead of one per container: an engine with ten listeners costs an idle Redis
 * what one with a single listener does. The engine has one entry per timeout among its members (usually one), so that
 * each member counts as alive exactly as long as its own timeout says. Each beat renews the entries, and answers every
 * member with the live members of its topic (Redis sends the listing only when its version differs from the one the
 * engine read last: an idle beat reads none); members of an engine that stops beating (killed, frozen, cut off) drop
 * out after their timeout, and a member that stops or pauses is taken off at once (a beat right away). An answer also
 * says whether the member's entry had been dropped before the beat (its time ran out): an ORDERLY membership then gives
 * up its slots.
 * <p>
 * Threads: {@link #join} and {@link #leave} from the containers' pollers and coordination threads; beats run on the
 * JVM's shared timer thread and complete on Lettuce's threads; the answers are handed to the members' callbacks (which
 * record them or post an event to their poller, and return). All state is guarded by this.
 */
public final class ConsumerRoster {

    /** How soon after a join or a leave the beat runs: containers started together share it. */
    private static final long SOON_MILLIS = 20;
    /**
     * How the id of an ORDERLY instance listed here ends: instances of older engines, listed only in their topic's own
     * membership key (members.lua), have ids without it (own.lua tells them apart by it).
     */
    public static final String ROSTER_MARK = ".r";

    /**
     * The instances of older engines among ids read from a topic's own membership key (members.lua): those without
     * {@link #ROSTER_MARK}. This engine's instances listed there too are counted by the roster instead.
     */
    public static List<String> olderInstances(List<String> topicKeyIds) {
        return topicKeyIds.stream().filter(id -> !id.endsWith(ROSTER_MARK)).toList();
    }
    /** The roster key of a topic's ORDERLY memberships (a topic name has no colon). */
    private static final String ORDERLY = "orderly:";

    private final RedisGateway gateway;
    private final RmqKeys keys;
    /** This engine's id in the live list: unique by construction (a fresh UUID per engine). */
    private final String id = ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 12);
    /** The members listed, by member id (the containers' own, unique per start). */
    private final Map<String, Member> members = new LinkedHashMap<>();
    /** Timeouts whose entry's lines changed since the last beat that answered: the next one rewrites them. */
    private final Set<Long> changed = new HashSet<>();
    /** Timeouts whose entry is in the live list as far as the engine knows (it beat, and did not take it off since). */
    private final Set<Long> listed = new HashSet<>();
    /** Members that left their entry to stay listed on their own until their timeout runs out: the next beat writes them. */
    private final List<Entry> lingering = new ArrayList<>();
    /**
     * The version of the listing that the last beat which answered read in full, and that listing (key -&gt; live
     * member ids); 0 and empty until then, and after a failed beat: the next one reads it all.
     */
    private long listingVersion;
    private Map<String, List<String>> listing = Map.of();
    private boolean beatUnderWay;
    /** A join or a leave came while a beat was under way: beat again when it answers. */
    private boolean again;
    /** The engine closed, or (tests) stopped beating without leaving, as a killed process does. */
    private boolean abandoned;
    private io.netty.util.@Nullable Timeout next;

    /**
     * What one beat told a member.
     *
     * @param sentMillis local time when the beat was sent (its listing holds from Redis's now then + the timeout)
     * @param redisNow   the roster's Redis clock (ms) when the beat ran
     * @param dropped    the member's entry was no longer listed before this beat (its time had run out): others may
     *                   have counted it gone; the beat listed it again
     * @param live       the live member ids of the member's topic (and kind), this one's included
     */
    public record Answer(long sentMillis, long redisNow, boolean dropped, List<String> live) {
    }

    /** Who is listed, as {@link #read} found it. */
    public record Listing(long redisNow, Map<String, List<String>> byKey) {

        /** The live ORDERLY members of {@code topic}. */
        public List<String> orderly(String topic) {
            return byKey.getOrDefault(ORDERLY + topic, List.of());
        }
    }

    private record Member(String key, long ttlMillis, long beatEveryMillis,
            BiConsumer<@Nullable Answer, @Nullable Throwable> answer) {
    }

    /**
     * One entry in a beat: a timeout's entry ({@code group} its timeout) with its lines, one to take off (no lines),
     * or a lingering member's entry of its own ({@code group} 0), written once and left to run out.
     */
    private record Entry(String id, long group, long ttl, String lines, boolean rewrite) {
    }

    ConsumerRoster(RedisGateway gateway, RmqKeys keys) {
        this.gateway = gateway;
        this.keys = keys;
    }

    /**
     * Lists {@code memberId} among the CONCURRENT consumers of {@code topic} until {@link #leave}: {@code answer}
     * gets the topic's live member ids after every beat of the engine (this one's included), or the beat's failure.
     * The engine beats at least every half of {@code ttlMillis}, and once right away.
     */
    public void join(String topic, String memberId, long ttlMillis,
            BiConsumer<@Nullable List<String>, @Nullable Throwable> answer) {
        add(memberId, new Member(topic, ttlMillis, Math.max(100, ttlMillis / 2),
                (beat, error) -> answer.accept(beat == null ? null : beat.live(), error)));
    }

    /**
     * Lists {@code instanceId} among the ORDERLY consumers of {@code topic} until {@link #leave}: {@code answer} gets
     * every beat's {@link Answer} (the topic's live ORDERLY instances), or its failure. The engine beats at least every
     * third of {@code ttlMillis} (a holder keeps its slots while it is listed: one lost beat does not stop them), and
     * once right away.
     */
    public void joinOrderly(String topic, String instanceId, long ttlMillis,
            BiConsumer<@Nullable Answer, @Nullable Throwable> answer) {
        add(instanceId, new Member(ORDERLY + topic, ttlMillis, Math.max(100, ttlMillis / 3), answer));
    }

    private synchronized void add(String memberId, Member member) {
        Member before = members.put(memberId, member);
        if (before != null) {
            changed.add(before.ttlMillis());
        }
        changed.add(member.ttlMillis());
        beatSoon();
    }

    /** Takes {@code memberId} off at the next beat (right away); a lost leave ages out with the timeout. */
    public synchronized void leave(String memberId) {
        Member member = members.remove(memberId);
        if (member != null) {
            changed.add(member.ttlMillis());
            beatSoon();
        }
    }

    /**
     * Takes {@code memberId} off its entry and lists it on its own for {@code millis} from the next beat (right away),
     * without renewing it: others count it gone once that time has run out, as if its process had died (an ORDERLY
     * container that stops with handlers still running keeps its slots that long).
     */
    public synchronized void linger(String memberId, long millis) {
        Member member = members.remove(memberId);
        if (member != null) {
            changed.add(member.ttlMillis());
            lingering.add(new Entry(id + "/linger-" + memberId, 0, Math.max(1, millis),
                    member.key() + "\t" + memberId + "\n", true));
            beatSoon();
        }
    }

    /** Who is listed now (read only: the admin's view of a topic's ORDERLY consumers). */
    public CompletableFuture<Listing> read() {
        CompletableFuture<List<Object>> reply;
        try {
            reply = gateway.eval(RmqScript.CONSUMERS_BEAT, ScriptOutputType.MULTI,
                    new byte[][] {keys.consumersLive(), keys.consumersMembers()}, Replies.bytes("read"),
                    Replies.bytes("0"));
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
        return reply.thenApply(items -> new Listing((Long) items.get(0), byKey(items)));
    }

    /**
     * The engine closes: takes its entries off (waiting up to a second: the connection closes next; a lost leave ages
     * out with the timeout), and beats no more.
     */
    public void close() {
        List<Entry> off = new ArrayList<>();
        synchronized (this) {
            if (abandoned) {
                return;
            }
            abandoned = true;
            if (next != null) {
                next.cancel();
                next = null;
            }
            Set<Long> ttls = new TreeSet<>(listed);
            ttls.addAll(changed);
            members.values().forEach(member -> ttls.add(member.ttlMillis()));
            ttls.forEach(ttl -> off.add(new Entry(entryId(ttl), ttl, 0, "", false)));
            off.addAll(lingering); // they stay listed until their time runs out
            lingering.clear();
        }
        if (!off.isEmpty()) {
            try {
                send(off, 0).get(1, java.util.concurrent.TimeUnit.SECONDS);
            }
            catch (Exception ex) {
                if (ex instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                // ages out with the timeout
            }
        }
    }

    /**
     * Tests: stops beating without leaving, after one last beat that lists the members for {@code lastTtlMillis}
     * (a process that died: the others drop its members once that time has run out).
     */
    public CompletableFuture<Void> abandon(long lastTtlMillis) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        List<Entry> last = new ArrayList<>();
        synchronized (this) {
            abandoned = true;
            if (next != null) {
                next.cancel();
            }
            // each entry keeps its id (its members' timeout) and lives lastTtlMillis from now
            groups().forEach((ttl, lines) -> last.add(new Entry(entryId(ttl), ttl, Math.max(1, lastTtlMillis), lines,
                    true)));
        }
        send(last, 0).whenComplete((reply, error) -> {
            if (error != null) {
                done.completeExceptionally(error);
            }
            else {
                done.complete(null);
            }
        });
        return done;
    }

    private void beatSoon() {
        if (abandoned) {
            return;
        }
        if (beatUnderWay) {
            again = true;
            return;
        }
        if (next != null) {
            next.cancel();
        }
        next = Timeouts.after(SOON_MILLIS, this::beat);
    }

    /** One beat (timer thread): renews, lists, or takes off, and hands every member its topic's live ids. */
    private void beat() {
        List<Entry> entries = new ArrayList<>();
        Map<String, Member> sent;
        long timeout;
        long known;
        synchronized (this) {
            next = null;
            if (abandoned || beatUnderWay) {
                return;
            }
            Map<Long, String> groups = groups();
            for (Map.Entry<Long, String> group : groups.entrySet()) {
                entries.add(new Entry(entryId(group.getKey()), group.getKey(), group.getKey(), group.getValue(),
                        changed.contains(group.getKey())));
            }
            for (long ttl : new TreeSet<>(listed)) {
                if (!groups.containsKey(ttl)) {
                    entries.add(new Entry(entryId(ttl), ttl, 0, "", false)); // its last member left: taken off
                }
            }
            entries.addAll(lingering);
            lingering.clear();
            changed.clear();
            if (entries.isEmpty()) {
                return; // nothing to list, nothing to take off
            }
            beatUnderWay = true;
            sent = new LinkedHashMap<>(members);
            timeout = beatEveryMillis();
            known = listingVersion;
        }
        long sentMillis = System.currentTimeMillis();
        Timeouts.within(send(entries, known), timeout, () -> "the heartbeat of the engine's consumers")
                .whenComplete((reply, error) -> answered(entries, sent, sentMillis, reply, error));
    }

    /**
     * One call of consumers_beat.lua for {@code entries}; {@code knownVersion}: the listing's version the engine holds
     * (its lines come back only when the listing has another), 0 for none.
     */
    private CompletableFuture<List<Object>> send(List<Entry> entries, long knownVersion) {
        List<byte[]> args = new ArrayList<>(2 + entries.size() * 4);
        args.add(Replies.bytes("beat"));
        args.add(Replies.bytes(knownVersion));
        for (Entry entry : entries) {
            args.add(Replies.bytes(entry.id()));
            args.add(Replies.bytes(entry.lines().isEmpty() ? 0 : Math.max(1, entry.ttl())));
            args.add(entry.lines().getBytes(StandardCharsets.UTF_8));
            args.add(Replies.bytes(entry.rewrite() ? "1" : "0"));
        }
        try {
            return gateway.eval(RmqScript.CONSUMERS_BEAT, ScriptOutputType.MULTI,
                    new byte[][] {keys.consumersLive(), keys.consumersMembers()}, args.toArray(byte[][]::new));
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
    }

    private void answered(List<Entry> entries, Map<String, Member> sent, long sentMillis,
            @Nullable List<Object> reply, @Nullable Throwable error) {
        List<Map.Entry<String, Member>> answer = new ArrayList<>();
        Set<Long> dropped = new HashSet<>();
        Map<String, List<String>> live = null;
        synchronized (this) {
            beatUnderWay = false;
            if (error != null || reply == null) {
                listingVersion = 0;
                listing = Map.of();
                // an entry may have been dropped meanwhile: list its members again (a lingering one: it may never be
                // listed, which is how it ends anyway)
                entries.forEach(entry -> changed.add(entry.group()));
            }
            else {
                String added = Replies.string((byte[]) reply.get(1));
                for (int i = 0; i < entries.size(); i++) {
                    long ttl = entries.get(i).group();
                    if (ttl == 0) {
                        continue;
                    }
                    if (entries.get(i).lines().isEmpty()) {
                        listed.remove(ttl);
                    }
                    else {
                        if (i < added.length() && added.charAt(i) == '1' && listed.contains(ttl)) {
                            dropped.add(ttl);
                        }
                        listed.add(ttl);
                    }
                }
                if ((Long) reply.get(3) == 1) {
                    listingVersion = (Long) reply.get(2);
                    listing = byKey(reply);
                }
                live = listing; // unchanged since the beat that read it: the version is the one this beat named
            }
            // a member answers for itself only once its lines went out (one that joined since waits for the next beat)
            for (Map.Entry<String, Member> member : sent.entrySet()) {
                if (members.get(member.getKey()) == member.getValue()) {
                    answer.add(member);
                }
            }
            if (!abandoned) {
                if (again) {
                    again = false;
                    next = Timeouts.after(SOON_MILLIS, this::beat);
                }
                else if (!members.isEmpty() || !listed.isEmpty()) {
                    next = Timeouts.after(beatEveryMillis(), this::beat);
                }
            }
        }
        for (Map.Entry<String, Member> member : answer) {
            Member m = member.getValue();
            m.answer().accept(live == null ? null : new Answer(sentMillis, (Long) reply.get(0),
                    dropped.contains(m.ttlMillis()), live.getOrDefault(m.key(), List.of())), error);
        }
    }

    private long beatEveryMillis() {
        long every = Long.MAX_VALUE;
        for (Member member : members.values()) {
            every = Math.min(every, member.beatEveryMillis());
        }
        return every == Long.MAX_VALUE ? 100 : every;
    }

    /** The members' lines per timeout (each timeout is one entry). */
    private Map<Long, String> groups() {
        Map<Long, StringBuilder> out = new TreeMap<>();
        members.forEach((memberId, member) -> out.computeIfAbsent(member.ttlMillis(), ttl -> new StringBuilder())
                .append(member.key()).append('\t').append(memberId).append('\n'));
        Map<Long, String> lines = new TreeMap<>();
        out.forEach((ttl, text) -> lines.put(ttl, text.toString()));
        return lines;
    }

    private String entryId(long ttl) {
        return id + "/" + ttl;
    }

    /**
     * The script's reply, { now, added, version, 1, entry, lines, ... }, as key (topic or ORDERLY key) -&gt; live
     * member ids (unmodifiable: one listing answers every beat until it changes).
     */
    private static Map<String, List<String>> byKey(List<Object> items) {
        Map<String, List<String>> out = new HashMap<>();
        for (int i = 5; i < items.size(); i += 2) {
            for (String line : Replies.string((byte[]) items.get(i)).split("\n")) {
                int tab = line.lastIndexOf('\t');
                if (tab > 0) {
                    out.computeIfAbsent(line.substring(0, tab), topic -> new ArrayList<>()).add(line.substring(tab + 1));
                }
            }
        }
        Map<String, List<String>> lists = new HashMap<>();
        out.forEach((key, ids) -> lists.put(key, List.copyOf(ids)));
        return Map.copyOf(lists);
    }
}
