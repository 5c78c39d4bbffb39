package io.rmq.redis.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.protocol.CommandArgs;
import io.netty.buffer.ByteBuf;
import org.jspecify.annotations.Nullable;

/**
 * The arguments of one command written out as RESP once, into one array, when the call is made (script calls:
 * {@code sha numkeys key... arg...}; batch sends: {@code key [NX] score member ...}). Lettuce would encode them one
 * by one on the connection's single event-loop thread through a codec and a handful of buffer calls each: per
 * member, on the thread every command and reply of the connection goes through (BENCHMARKS.md has the profile).
 * <p>
 * The key that decides the command's cluster slot is also registered the ordinary way: a cluster connection routes
 * the command by it.
 */
final class EncodedArgs extends CommandArgs<byte[], byte[]> {

    private final int count;
    private final byte[] resp;

    /**
     * @param routingKey the key whose slot the command belongs to, or null
     * @param parts      every argument after the command name, in order
     */
    EncodedArgs(byte @Nullable [] routingKey, List<byte[]> parts) {
        super(ByteArrayCodec.INSTANCE);
        if (routingKey != null) {
            super.addKey(routingKey);
        }
        this.count = parts.size();
        int size = 0;
        for (byte[] part : parts) {
            size += bulkSize(part);
        }
        byte[] out = new byte[size];
        int at = 0;
        for (byte[] part : parts) {
            at = writeBulk(out, at, part);
        }
        this.resp = out;
    }

    /** EVALSHA's arguments. */
    static EncodedArgs script(byte[] sha, byte[][] keys, byte[][] args) {
        List<byte[]> parts = new ArrayList<>(2 + keys.length + args.length);
        parts.add(sha);
        parts.add(Integer.toString(keys.length).getBytes(StandardCharsets.US_ASCII));
        parts.addAll(Arrays.asList(keys));
        parts.addAll(Arrays.asList(args));
        return new EncodedArgs(keys.length > 0 ? keys[0] : null, parts);
    }

    @Override
    public int count() {
        return count;
    }

    @Override
    public void encode(ByteBuf buf) {
        buf.writeBytes(resp);
    }

    @Override
    public String toCommandString() {
        return "<" + count + " arguments, " + resp.length + " bytes>";
    }

    /** {@code $<length>\r\n<bytes>\r\n} */
    private static int bulkSize(byte[] value) {
        return 1 + digits(value.length) + 2 + value.length + 2;
    }

    private static int writeBulk(byte[] out, int at, byte[] value) {
        out[at++] = '$';
        at = writeDigits(out, at, value.length);
        out[at++] = '\r';
        out[at++] = '\n';
        System.arraycopy(value, 0, out, at, value.length);
        at += value.length;
        out[at++] = '\r';
        out[at++] = '\n';
        return at;
    }

    private static int digits(int n) {
        int digits = 1;
        while (n >= 10) {
            n /= 10;
            digits++;
        }
        return digits;
    }

    private static int writeDigits(byte[] out, int at, int n) {
        int end = at + digits(n);
        for (int i = end - 1; i >= at; i--) {
            out[i] = (byte) ('0' + n % 10);
            n /= 10;
        }
        return end;
    }
}
