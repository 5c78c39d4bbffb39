package io.rmq.engine;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.ScriptOutputType;
import io.rmq.Rmq;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rmq.internal.RmqInternals.redis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The engines' one heartbeat for their consumers (consumers_beat.lua) returns the listing only when it changed since
 * the engine last read it: an idle beat reads no lines, yet every change is seen at the next beat — another engine's
 * join and leave, and any beat of a roster engine from before the listing's version (it drops the version, so every
 * engine reads everything again).
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class ConsumerRosterTest extends EngineTestSupport {

    /**
     * Beats every 3 s: an idle window of 5 s holds one or two per engine, and nothing runs out in it unless a beat is
     * 3 s late.
     */
    private static final long TTL_MILLIS = 6_000;

    ConsumerRosterTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void anIdleBeatReadsNoListingYetEveryJoinAndLeaveIsSeenAtTheNextBeat() throws Exception {
        AtomicReference<List<String>> seenByA = join(rmq, "a-1");
        await().atMost(Duration.ofSeconds(20)).until(() -> seenByA.get().contains("a-1"));

        Rmq other = newEngine();
        AtomicReference<List<String>> seenByB = join(other, "b-1");
        await().atMost(Duration.ofSeconds(20)).until(() -> seenByA.get().containsAll(List.of("a-1", "b-1"))
                && seenByB.get().containsAll(List.of("a-1", "b-1")));

        Thread.sleep(TTL_MILLIS / 2 + 500); // each engine has read the listing with both
        Map<String, Long> before = commandCalls();
        Thread.sleep(5_000);
        Map<String, Long> after = commandCalls();
        long beats = after.getOrDefault("evalsha", 0L) - before.getOrDefault("evalsha", 0L);
        long hgetall = after.getOrDefault("hgetall", 0L) - before.getOrDefault("hgetall", 0L);
        long zrange = after.getOrDefault("zrange", 0L) - before.getOrDefault("zrange", 0L)
                + after.getOrDefault("zrangebyscore", 0L) - before.getOrDefault("zrangebyscore", 0L);
        assertThat(beats).as("the two engines' beats over 5 s").isPositive();
        assertThat(hgetall + zrange).as("listings read by idle beats (%d beats)", beats).isZero();
        assertThat(seenByA.get()).containsExactlyInAnyOrder("a-1", "b-1");

        redis(other).roster().leave("b-1");
        await().atMost(Duration.ofSeconds(20)).until(() -> !seenByA.get().contains("b-1"));
        assertThat(seenByA.get()).containsExactly("a-1");
        redis(rmq).roster().leave("a-1");
    }

    @Test
    void everyBeatOfARosterEngineBeforeTheVersionIsSeenAtTheNextBeat() throws Exception {
        AtomicReference<List<String>> seen = join(rmq, "a-1");
        await().atMost(Duration.ofSeconds(20)).until(() -> seen.get().contains("a-1"));
        Thread.sleep(TTL_MILLIS / 2 + 500); // a beat that found the listing unchanged: it holds the version

        // an engine with the roster's first script lists a consumer of the topic, then changes it in place: a HSET
        // of its entry alone, which only the dropped version tells the others about
        String entry = "4242-olderengine/20000";
        olderBeat(entry, "roster\told-1\n");
        await().atMost(Duration.ofSeconds(20)).until(() -> seen.get().contains("old-1"));
        Thread.sleep(TTL_MILLIS / 2 + 500);
        olderBeat(entry, "roster\told-2\n");
        await().atMost(Duration.ofSeconds(20)).until(() -> seen.get().contains("old-2"));
        assertThat(seen.get()).containsExactlyInAnyOrder("a-1", "old-2");

        // and the admin's read lists entries only, never the version
        assertThat(redis(rmq).roster().read().get().byKey()).containsOnlyKeys("roster");
        redis(rmq).roster().leave("a-1");
    }

    /** Lists {@code memberId} among the consumers of topic "roster" in {@code engine}'s roster: its latest answer. */
    private AtomicReference<List<String>> join(Rmq engine, String memberId) {
        AtomicReference<List<String>> latest = new AtomicReference<>(List.of());
        redis(engine).roster().join("roster", memberId, TTL_MILLIS, (live, error) -> {
            if (live != null) {
                latest.set(live);
            }
        });
        return latest;
    }

    /** One beat of an engine whose roster script predates the listing's version (kept verbatim in the resources). */
    private void olderBeat(String entry, String lines) throws IOException {
        String script;
        try (InputStream in = ConsumerRosterTest.class.getResourceAsStream(
                "/io/rmq/upgrade/roster1/consumers_beat.lua")) {
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        byte[][] keys = {redis(rmq).keys().consumersLive(), redis(rmq).keys().consumersMembers()};
        byte[][] args = {bytes("beat"), bytes(entry), bytes("20000"), bytes(lines), bytes("1")};
        List<Object> reply = raw(c -> c.eval(script, ScriptOutputType.MULTI, keys, args));
        assertThat(reply).isNotEmpty();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
