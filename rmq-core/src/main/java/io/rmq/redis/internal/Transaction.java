package io.rmq.redis.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.netty.buffer.ByteBuf;

/**
 * One {@code MULTI} … {@code EXEC} of native commands for a standalone connection ({@link RedisGateway#dispatchTransaction}):
 * what a script would make atomic, without the script's cost per argument. Built by a sender's thread, encoded and
 * completed on the connection's event-loop thread (the only thread that touches {@link #multiWrites} and each
 * command's generation after the build).
 * <p>
 * Lettuce re-sends the commands a dropped connection left unanswered on the new one. A {@code MULTI} answered before
 * the drop is not re-sent, and its queued commands would then run one by one, not atomically; so a queued command or
 * {@code EXEC} written again without its {@code MULTI} being written again before it writes a {@code PING} instead:
 * nothing runs, and {@link #executed} fails (the outcome is unknown to the sender, as for any call whose reply was
 * lost: the transaction ran in full or not at all).
 */
final class Transaction {

    private static final byte[] PING = "*1\r\n$4\r\nPING\r\n".getBytes(StandardCharsets.US_ASCII);

    /** How often this transaction's MULTI was written (event-loop thread). */
    private int multiWrites;
    /** MULTI, the queued commands, EXEC. */
    private final List<AsyncCommand<byte[], byte[], ?>> commands = new ArrayList<>();
    private final AsyncCommand<byte[], byte[], List<Object>> exec;

    /** @param inside the commands to run atomically, in order (their outputs are not used: EXEC answers for them) */
    Transaction(List<Command<byte[], byte[], ?>> inside) {
        commands.add(new AsyncCommand<>(new Multi()));
        for (Command<byte[], byte[], ?> command : inside) {
            commands.add(new AsyncCommand<>(new Queued<>(command.getType(),
                    new StatusOutput<>(ByteArrayCodec.INSTANCE), command.getArgs())));
        }
        exec = new AsyncCommand<>(new Queued<>(CommandType.EXEC, new ExecOutput(), null));
        commands.add(exec);
    }

    /** MULTI, the queued commands and EXEC, to be written together. */
    List<AsyncCommand<byte[], byte[], ?>> commands() {
        return commands;
    }

    /**
     * Per inner command its reply (a Long for the integer replies the callers use), once EXEC ran them; fails with
     * the first inner command's refusal (OOM, a wrong type) when Redis discarded the transaction, or with the reason
     * it was not executed.
     */
    CompletableFuture<List<Object>> executed() {
        return exec.toCompletableFuture().handle((replies, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(replies);
            }
            for (AsyncCommand<byte[], byte[], ?> each : commands.subList(1, commands.size() - 1)) {
                if (each.isCompletedExceptionally()) {
                    // EXECABORT says only that something was refused: the refusal itself names the cause
                    return CompletableFuture.<List<Object>>failedFuture(each.handle((r, e) -> e).join());
                }
            }
            return CompletableFuture.<List<Object>>failedFuture(error);
        }).thenCompose(f -> f);
    }

    private final class Multi extends Command<byte[], byte[], String> {

        Multi() {
            super(CommandType.MULTI, new StatusOutput<>(ByteArrayCodec.INSTANCE));
        }

        @Override
        public void encode(ByteBuf buf) {
            multiWrites++;
            super.encode(buf);
        }
    }

    /** A command of the transaction after its MULTI: written for real only right behind a write of that MULTI. */
    private final class Queued<T> extends Command<byte[], byte[], T> {

        /** The MULTI write this command was last written behind. */
        private int writtenFor;

        Queued(ProtocolKeyword type, CommandOutput<byte[], byte[], T> output,
                CommandArgs<byte[], byte[]> args) {
            super(type, output, args);
        }

        @Override
        public void encode(ByteBuf buf) {
            if (multiWrites > writtenFor) {
                writtenFor = multiWrites;
                super.encode(buf);
            }
            else {
                buf.writeBytes(PING); // re-sent without its MULTI: run nothing (its reply, PONG, is no EXEC result)
            }
        }
    }

    /**
     * EXEC's reply: the inner commands' replies in one flat list (integers as Long, text as String, nulls as null;
     * an inner array's elements in its place); anything but an array is no execution.
     */
    private static final class ExecOutput extends CommandOutput<byte[], byte[], List<Object>> {

        private int depth;

        ExecOutput() {
            super(ByteArrayCodec.INSTANCE, null);
        }

        @Override
        public void multi(int count) {
            if (depth++ == 0) {
                if (count < 0) {
                    setError("not executed (a null reply)");
                    return;
                }
                output = new ArrayList<>(count);
            }
        }

        @Override
        public void set(long integer) {
            if (output != null) {
                output.add(integer);
            }
        }

        @Override
        public void set(ByteBuffer bytes) {
            if (output == null) {
                setError("not executed: " + (bytes == null ? "no reply" : decodeString(bytes)));
            }
            else {
                output.add(bytes == null ? null : decodeString(bytes));
            }
        }

        @Override
        public void complete(int depth) {
            // nothing: the list is built as replies come
        }
    }
}
