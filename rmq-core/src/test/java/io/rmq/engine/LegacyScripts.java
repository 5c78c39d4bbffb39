package io.rmq.engine;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.rmq.core.internal.RmqKeys;
import io.rmq.core.internal.RmqKeys.SlotKeys;

/**
 * The engine of the previous release (before message ids and envelopes, commit 6ad5344), as far as an upgrade test
 * needs it: its own Lua scripts, kept verbatim in {@code io/rmq/upgrade/v0/}, run with the key lists that engine
 * passed — 10 slot keys (store … context, no msg HASH), the leasing scripts with lease-seq and skipped after them.
 * Includes are pasted as that engine's loader did. The scripts are ours to keep: the engine under test must read what
 * they wrote, whatever the main scripts become.
 */
final class LegacyScripts implements AutoCloseable {

    private static final String DIR = "/io/rmq/upgrade/v0/";
    private static final String INCLUDE = "--#include ";
    /** The slot keys the old scripts took: store, prepare, dead, attempts, dead-info, retry, priority, owner, cancelled, context. */
    private static final int OLD_SLOT_KEYS = 10;

    /** A delivery the old pop handed out: its body and fencing token (1/1024 ms), and the lease deadline in Redis ms. */
    record LegacyDelivery(String body, long token) {

        long leaseDeadline() {
            return Math.floorDiv(token, 1024);
        }
    }

    private final RmqKeys keys;
    private final StatefulConnection<byte[], byte[]> connection;
    private final RedisClusterCommands<byte[], byte[]> redis;

    LegacyScripts(AbstractRedisClient client, RmqKeys keys) {
        this.keys = keys;
        if (client instanceof RedisClusterClient cluster) {
            var c = cluster.connect(ByteArrayCodec.INSTANCE);
            this.connection = c;
            this.redis = c.sync();
        }
        else {
            var c = ((RedisClient) client).connect(ByteArrayCodec.INSTANCE);
            this.connection = c;
            this.redis = c.sync();
        }
    }

    /** Registers a topic as the old engine did ({@code TYPE:slotAmount}, no consume mode). */
    void defineTopic(String name, String type, int slotAmount) {
        eval("define_topic.lua", ScriptOutputType.VALUE, new byte[][] {keys.topics()}, name, type + ":" + slotAmount, "");
    }

    /**
     * Old send.lua: {@code entries} are parameter, body pairs (mode 'range' / 'score'), or parameter, body,
     * context-text triples (mode 'range-ctx' / 'score-ctx', the context as the old engine encoded it: the bare
     * traceparent, then {@code key=value} lines).
     */
    void send(SlotKeys slot, String mode, boolean priority, String... entries) {
        List<String> args = new ArrayList<>(List.of(mode, priority ? "1" : "0"));
        args.addAll(Arrays.asList(entries));
        eval("send.lua", ScriptOutputType.VALUE, oldKeys(slot, false), args.toArray(String[]::new));
    }

    /**
     * Old pop.lua: takes up to {@code batch} messages due within {@code lookAheadMs} (time types) into prepare, leased
     * for {@code leaseMs}; no retry policy applies (expired leases are not swept by this call's 0 limit).
     */
    List<LegacyDelivery> pop(SlotKeys slot, boolean priority, int batch, long leaseMs, long lookAheadMs) {
        List<Object> reply = eval("pop.lua", ScriptOutputType.MULTI, oldKeys(slot, true), priority ? "1" : "0",
                Integer.toString(batch), Long.toString(leaseMs), "16", "1000", "2", "60000", "0", "0.5", "0", "0",
                Long.toString(lookAheadMs));
        long token = (Long) reply.get(0);
        long flags = (Long) reply.get(3);
        int step = 2 + ((flags & 1) != 0 ? 1 : 0) + ((flags & 2) != 0 ? 1 : 0);
        List<LegacyDelivery> out = new ArrayList<>();
        for (int i = 4; i < reply.size(); i += step) {
            out.add(new LegacyDelivery(new String((byte[]) reply.get(i), StandardCharsets.UTF_8), token));
        }
        return out;
    }

    /**
     * Old nack.lua for one delivery: {@code action} '' (the retry policy: back off {@code backoffMs}) or 'd' (dead at
     * once). Returns the script's outcome: 1 retry scheduled, 2 dead.
     */
    long nack(SlotKeys slot, boolean priority, LegacyDelivery delivery, String reason, String action, long backoffMs) {
        List<Object> reply = eval("nack.lua", ScriptOutputType.MULTI, oldKeys(slot, true), priority ? "1" : "0", "16",
                Long.toString(backoffMs), "1", Long.toString(backoffMs), "0", "0.5", delivery.body(),
                Long.toString(delivery.token()), reason, action);
        return (Long) reply.get(0);
    }

    /** Whether {@code key} exists (what the old engine left behind, and what this one has cleaned up). */
    boolean exists(byte[] key) {
        return redis.exists(key) == 1;
    }

    private static byte[][] oldKeys(SlotKeys slot, boolean leasing) {
        byte[][] out = Arrays.copyOf(slot.all(), OLD_SLOT_KEYS + (leasing ? 2 : 0));
        if (leasing) {
            out[OLD_SLOT_KEYS] = slot.leaseSeq();
            out[OLD_SLOT_KEYS + 1] = slot.skipped();
        }
        return out;
    }

    private <T> T eval(String file, ScriptOutputType type, byte[][] keys, String... args) {
        byte[][] values = new byte[args.length][];
        for (int i = 0; i < args.length; i++) {
            values[i] = args[i].getBytes(StandardCharsets.UTF_8);
        }
        return redis.eval(source(file), type, keys, values);
    }

    private static String source(String file) {
        StringBuilder out = new StringBuilder();
        for (String line : read(file).split("\n", -1)) {
            out.append(line.startsWith(INCLUDE) ? read(line.substring(INCLUDE.length()).trim()) : line).append('\n');
        }
        return out.toString();
    }

    private static String read(String file) {
        try (InputStream in = LegacyScripts.class.getResourceAsStream(DIR + file)) {
            if (in == null) {
                throw new IllegalStateException("Missing legacy script " + DIR + file);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            throw new IllegalStateException(ex);
        }
    }

    @Override
    public void close() {
        connection.close();
    }
}
