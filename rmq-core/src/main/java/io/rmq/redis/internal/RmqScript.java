package io.rmq.redis.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import io.rmq.core.RmqException;

/**
 * The Lua scripts, each a commented {@code .lua} resource in {@code io/rmq/redis/scripts/} (where they were before this
 * class moved to the internal package; the docs and the AOT hints name that path). A line {@code --#include NAME} pastes
 * a shared helper file in, so shared logic (clock, backoff, failure routing) exists once.
 */
enum RmqScript {

    POP("pop.lua"),
    ACK("ack.lua"),
    NACK("nack.lua"),
    EXTEND("extend.lua"),
    SWEEP("sweep.lua"),
    SEND("send.lua"),
    SEND_ONE("send_one.lua"),
    CLOCK("clock.lua"),
    RELEASE("release.lua"),
    DEAD_PAGE("dead_page.lua"),
    DEAD_REQUEUE("dead_requeue.lua"),
    DEAD_DELETE("dead_delete.lua"),
    DEFINE_TOPIC("define_topic.lua"),
    OWN("own.lua"),
    ORDERLY_NEXT("orderly_next.lua"),
    ORDERLY_END("orderly_end.lua"),
    MEMBERS("members.lua"),
    CONSUMERS_BEAT("consumers_beat.lua"),
    RATE("rate.lua"),
    FIND("find.lua"),
    CANCEL("cancel.lua"),
    RESCHEDULE("reschedule.lua"),
    BROWSE("browse.lua"),
    PURGE("purge.lua"),
    STATS("stats.lua"),
    RETRIES("retries.lua"),
    DEAD_SEARCH("dead_search.lua"),
    DEAD_GROUPS("dead_groups.lua"),
    RUN_NOW("run_now.lua"),
    SCHEDULE_REGISTER("schedule_register.lua"),
    SCHEDULE_CLAIM("schedule_claim.lua"),
    INSTANCE_BEAT("instance_beat.lua"),
    INSTANCE_LEAVE("instance_leave.lua"),
    GAUGES("gauges.lua"),
    INFLIGHT_PAGE("inflight_page.lua"),
    HISTORY_FLUSH("history_flush.lua"),
    HISTORY_READ("history_read.lua"),
    REPLY("reply.lua");

    private static final String INCLUDE = "--#include ";

    private final String file;
    private final String source;
    private final String sha;
    private final byte[] shaBytes;

    RmqScript(String file) {
        this.file = file;
        this.source = resolveIncludes(read(file));
        this.sha = sha1(source);
        this.shaBytes = sha.getBytes(StandardCharsets.US_ASCII);
    }

    String file() {
        return file;
    }

    String source() {
        return source;
    }

    /** The SHA1 Redis uses to identify the script in EVALSHA. */
    String sha() {
        return sha;
    }

    /** {@link #sha()} as the bytes sent (do not modify). */
    byte[] shaBytes() {
        return shaBytes;
    }

    private static String resolveIncludes(String text) {
        StringBuilder out = new StringBuilder(text.length() * 2);
        for (String line : text.split("\n", -1)) {
            if (line.startsWith(INCLUDE)) {
                out.append(read(line.substring(INCLUDE.length()).trim())).append('\n');
            }
            else {
                out.append(line).append('\n');
            }
        }
        return out.toString();
    }

    private static String read(String file) {
        try (InputStream in = RmqScript.class.getResourceAsStream("/io/rmq/redis/scripts/" + file)) {
            if (in == null) {
                throw new IllegalStateException("Missing Lua script resource io/rmq/redis/scripts/" + file);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            throw new RmqException("Cannot read Lua script " + file, ex);
        }
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
