package io.rmq.redis;

import java.nio.charset.StandardCharsets;

import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.protocol.CommandArgs;
import io.netty.buffer.ByteBuf;

/**
 * The arguments of one EVALSHA ({@code sha numkeys key... arg...}) written out as RESP once, into one array, when
 * the call is made. Lettuce would encode them one by one on the connection's single event-loop thread through a
 * codec and a handful of buffer calls each; for a script call carrying a batch of ~100-byte members that was ~1 µs
 * per member there (W1 profiles), on the thread every command and reply of the connection goes through.
 * <p>
 * The first key is also registered the ordinary way: a cluster connection routes the command by it.
 */
final class EncodedScriptArgs extends CommandArgs<byte[], byte[]> {

    private final int count;
    private final byte[] resp;

    EncodedScriptArgs(byte[] sha, byte[][] keys, byte[][] args) {
        super(ByteArrayCodec.INSTANCE);
        if (keys.length > 0) {
            super.addKey(keys[0]);
        }
        this.count = 2 + keys.length + args.length;
        byte[] numKeys = Integer.toString(keys.length).getBytes(StandardCharsets.US_ASCII);
        int size = bulkSize(sha) + bulkSize(numKeys);
        for (byte[] key : keys) {
            size += bulkSize(key);
        }
        for (byte[] arg : args) {
            size += bulkSize(arg);
        }
        byte[] out = new byte[size];
        int at = writeBulk(out, 0, sha);
        at = writeBulk(out, at, numKeys);
        for (byte[] key : keys) {
            at = writeBulk(out, at, key);
        }
        for (byte[] arg : args) {
            at = writeBulk(out, at, arg);
        }
        this.resp = out;
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
