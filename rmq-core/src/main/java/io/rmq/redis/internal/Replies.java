package io.rmq.redis.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqException;
import org.jspecify.annotations.Nullable;

/**
 * Stateless (static helpers and constants only), so usable from any thread: the senders', the listeners', and
 * Lettuce's event-loop threads, where replies are read.
 * <p>
 * The bytes RMQ's Redis access shares between {@link RmqRedis}, {@link RmqRedisLeases}, {@link RmqRedisOrderly},
 * {@link SendWrites} and {@link RmqRedisAdmin}: arguments as the scripts and native commands take them, and replies as
 * the scripts and Redis write them.
 */
final class Replies {

    static final byte[] ONE = bytes("1");
    static final byte[] ZERO = bytes("0");

    private Replies() {
    }

    /** A reply of one decimal digit per item ("1101"), as send.lua and ack.lua write it. */
    static List<Long> digits(byte[] reply) {
        List<Long> out = new ArrayList<>(reply.length);
        for (byte digit : reply) {
            if (digit == 'E') {
                out.add(-1L); // send.lua refused that message: it expired already
                continue;
            }
            if (digit == 'D') {
                out.add(-2L); // send.lua dropped that message: a deduplication window had not ended
                continue;
            }
            if (digit < '0' || digit > '9') {
                throw new RmqException("Unexpected Redis reply " + new String(reply, StandardCharsets.UTF_8));
            }
            out.add((long) (digit - '0'));
        }
        return out;
    }

    static byte @Nullable [] nonEmpty(byte @Nullable [] reply) {
        return reply == null || reply.length == 0 ? null : reply;
    }

    static String scoreText(double score) {
        return score == Math.rint(score) && !Double.isInfinite(score) ? Long.toString((long) score)
                : Double.toString(score);
    }

    static double number(Object reply) {
        if (reply instanceof Long l) {
            return l;
        }
        if (reply instanceof byte[] b) {
            return parseScore(b);
        }
        throw new RmqException("Unexpected Redis reply " + reply);
    }

    /**
     * A score as Redis prints it. Scores are whole numbers in practice (due times, priorities): those are read
     * straight from the bytes (one per popped message, on the connection's event-loop thread); anything else
     * ("1.5", "1e+20", "inf") goes through {@link Double#parseDouble}.
     */
    static double parseScore(byte[] b) {
        int i = b.length > 0 && b[0] == '-' ? 1 : 0;
        if (b.length == i || b.length - i > 15) {
            return Double.parseDouble(string(b));
        }
        long value = 0;
        for (int k = i; k < b.length; k++) {
            int digit = b[k] - '0';
            if (digit < 0 || digit > 9) {
                return Double.parseDouble(string(b));
            }
            value = value * 10 + digit;
        }
        return i == 1 ? -value : value;
    }

    /**
     * The retry policy as the scripts that fail a delivery take it (pop.lua's sweep, nack.lua, sweep.lua,
     * orderly_next.lua): ARGV priority, max retries, backoff initial, multiplier, max, jitter, and a random draw.
     */
    static void fillRetryArgs(byte[][] args, boolean priority, RetryPolicy retry) {
        args[0] = priority ? ONE : ZERO;
        // the max retries with the dead-letter retention (see max_retries_of in _common.lua)
        args[1] = maxRetriesArg(retry);
        args[2] = bytes(retry.backoff().initial().toMillis());
        args[3] = bytes(Double.toString(retry.backoff().multiplier()));
        args[4] = bytes(retry.backoff().max().toMillis());
        args[5] = bytes(Double.toString(retry.backoff().jitter()));
        args[6] = bytes(Double.toString(ThreadLocalRandom.current().nextDouble()));
    }

    /**
     * The max retries with the dead-letter retention's count and age bounds and whether expired messages go to dead,
     * one argument (own.lua takes it alone).
     */
    static byte[] maxRetriesArg(RetryPolicy retry) {
        return bytes(retry.maxRetries() + " " + retry.deadLetters().maxCount() + " "
                + retry.deadLetters().maxAge().toMillis() + (retry.deadLetters().keepExpired() ? " e" : ""));
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] bytes(long n) {
        return bytes(Long.toString(n));
    }

    static String string(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }
}
