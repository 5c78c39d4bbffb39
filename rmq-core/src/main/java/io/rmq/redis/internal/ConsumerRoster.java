package io.rmq.redis.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;

import io.lettuce.core.ScriptOutputType;
import io.rmq.core.internal.RmqKeys;
import io.rmq.core.internal.Timeouts;
import org.jspecify.annotations.Nullable;

/**
 * Not API (RMQ's internal Redis layer, changed without notice). The CONCURRENT containers of one engine that share
 * their topics' slots (the containers' {@code SlotShares}), listed in Redis by one heartbeat for the whole engine
 * (consumers_beat.lua) instead of one per container: an engine with ten listeners costs an idle Redis what one with a
 * single listener does. Each beat renews the engine's entry (alive until Redis's now + the shortest timeout of its
 * containers), and answers every container with the live members of its topic; containers of an engine that stops
 * beating (killed, frozen, cut off) drop out after their timeout, and a container that stops or pauses is taken off at
 * once (a beat right away).
 * <p>
 * Threads: {@link #join} and {@link #leave} from the containers' pollers; beats run on the JVM's shared timer thread
 * and complete on Lettuce's threads; the answers are handed to the containers' callbacks (which post an event to
 * their poller and return). All state is guarded by this.
 */
public final class ConsumerRoster {

    /** How soon after a join or a leave the beat runs: containers started together share it. */
    private static final long SOON_MILLIS = 20;

    private final RedisGateway gateway;
    private final RmqKeys keys;
    /** This engine's id in the live list: unique by construction (a fresh UUID per engine). */
    private final String id = ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 12);
    /** The containers listed, by member id (the containers' own, unique per start). */
    private final Map<String, Member> members = new LinkedHashMap<>();
    /** Whether the members changed since the last beat that answered: the next one rewrites the engine's lines. */
    private boolean changed;
    /** Whether the engine is in the live list as far as it knows (it beat and did not leave since). */
    private boolean listed;
    private boolean beatUnderWay;
    /** A join or a leave came while a beat was under way: beat again when it answers. */
    private boolean again;
    /** The engine closed, or (tests) stopped beating without leaving, as a killed process does. */
    private boolean abandoned;
    private io.netty.util.@Nullable Timeout next;

    private record Member(String topic, long ttlMillis, BiConsumer<@Nullable List<String>, @Nullable Throwable> answer) {
    }

    ConsumerRoster(RedisGateway gateway, RmqKeys keys) {
        this.gateway = gateway;
        this.keys = keys;
    }

    /**
     * Lists {@code memberId} among the CONCURRENT consumers of {@code topic} until {@link #leave}: {@code answer}
     * gets the topic's live member ids after every beat of the engine (this one's included), or the beat's failure.
     * The engine beats every half of the shortest {@code ttlMillis} of its members, and once right away.
     */
    public synchronized void join(String topic, String memberId, long ttlMillis,
            BiConsumer<@Nullable List<String>, @Nullable Throwable> answer) {
        members.put(memberId, new Member(topic, ttlMillis, answer));
        changed = true;
        beatSoon();
    }

    /** Takes {@code memberId} off at the next beat (right away); a lost leave ages out with the timeout. */
    public synchronized void leave(String memberId) {
        if (members.remove(memberId) != null) {
            changed = true;
            beatSoon();
        }
    }

    /**
     * The engine closes: takes its entry off (waiting up to a second: the connection closes next; a lost leave ages
     * out with the timeout), and beats no more.
     */
    public void close() {
        boolean leave;
        synchronized (this) {
            if (abandoned) {
                return;
            }
            abandoned = true;
            if (next != null) {
                next.cancel();
                next = null;
            }
            leave = listed || changed;
        }
        if (leave) {
            try {
                beat("", 1, "leave").get(1, java.util.concurrent.TimeUnit.SECONDS);
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
     * (a process that died: the others drop its containers once that time has run out).
     */
    public CompletableFuture<Void> abandon(long lastTtlMillis) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        String lines;
        synchronized (this) {
            abandoned = true;
            if (next != null) {
                next.cancel();
            }
            lines = lines();
        }
        beat(lines, lastTtlMillis, "list").whenComplete((live, error) -> {
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

    /** One beat (timer thread): renews, lists, or leaves, and hands every member its topic's live ids. */
    private void beat() {
        String lines;
        String action;
        long ttl;
        synchronized (this) {
            next = null;
            if (abandoned || beatUnderWay) {
                return;
            }
            if (members.isEmpty() && !listed) {
                changed = false;
                return; // nothing to list, nothing to take off
            }
            beatUnderWay = true;
            action = members.isEmpty() ? "leave" : changed ? "list" : "beat";
            changed = false;
            ttl = shortestTtl();
            lines = lines();
        }
        long timeout = Math.max(100, ttl / 2);
        Timeouts.within(beat(lines, ttl, action), timeout, () -> "the heartbeat of the CONCURRENT consumers")
                .whenComplete((live, error) -> answered(action, live, error));
    }

    private CompletableFuture<Map<String, List<String>>> beat(String lines, long ttl, String action) {
        CompletableFuture<List<Object>> reply;
        try {
            reply = gateway.eval(RmqScript.CONSUMERS_BEAT, ScriptOutputType.MULTI,
                    new byte[][] {keys.consumersLive(), keys.consumersMembers()}, Replies.bytes(id),
                    Replies.bytes(Math.max(1, ttl)), lines.getBytes(StandardCharsets.UTF_8), Replies.bytes(action));
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
        return reply.thenApply(ConsumerRoster::byTopic);
    }

    private void answered(String action, @Nullable Map<String, List<String>> live, @Nullable Throwable error) {
        List<Member> answer;
        synchronized (this) {
            beatUnderWay = false;
            if (error != null) {
                changed = true; // the engine may have been dropped meanwhile: list its members again
            }
            else {
                listed = !action.equals("leave");
            }
            answer = List.copyOf(members.values());
            if (!abandoned) {
                if (again) {
                    again = false;
                    next = Timeouts.after(SOON_MILLIS, this::beat);
                }
                else if (!members.isEmpty()) {
                    next = Timeouts.after(Math.max(100, shortestTtl() / 2), this::beat);
                }
            }
        }
        for (Member member : answer) {
            member.answer().accept(live == null ? null : live.getOrDefault(member.topic(), List.of()), error);
        }
    }

    private long shortestTtl() {
        long ttl = Long.MAX_VALUE;
        for (Member member : members.values()) {
            ttl = Math.min(ttl, member.ttlMillis());
        }
        return ttl == Long.MAX_VALUE ? 1 : ttl;
    }

    private String lines() {
        StringBuilder out = new StringBuilder();
        members.forEach((memberId, member) -> out.append(member.topic()).append('\t').append(memberId).append('\n'));
        return out.toString();
    }

    /** The script's reply, { now, engine, lines, ... }, as topic -&gt; live member ids. */
    private static Map<String, List<String>> byTopic(List<Object> items) {
        Map<String, List<String>> out = new HashMap<>();
        for (int i = 2; i < items.size(); i += 2) {
            for (String line : Replies.string((byte[]) items.get(i)).split("\n")) {
                int tab = line.lastIndexOf('\t');
                if (tab > 0) {
                    out.computeIfAbsent(line.substring(0, tab), topic -> new ArrayList<>()).add(line.substring(tab + 1));
                }
            }
        }
        return out;
    }
}
