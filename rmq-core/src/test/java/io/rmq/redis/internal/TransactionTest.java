package io.rmq.redis.internal;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a {@link Transaction} writes when Lettuce writes its commands again after a reconnect: the queued commands and
 * EXEC for real only behind a new write of their MULTI, else a PING each (so they never run one by one). The
 * transaction against Redis itself: {@code IdBatchRaceTest}, {@code TraceContextStorageTest}, {@code RedisFullTest}.
 */
class TransactionTest {

    private static Transaction transaction() {
        return new Transaction(List.of(
                new Command<>(CommandType.HSET, null, new EncodedArgs(bytes("m"), List.of(bytes("m"), bytes("f"),
                        bytes("v")))),
                new Command<>(CommandType.ZADD, null, new EncodedArgs(bytes("s"), List.of(bytes("s"), bytes("1"),
                        bytes("f"))))));
    }

    private static String written(List<AsyncCommand<byte[], byte[], ?>> commands) {
        ByteBuf buf = Unpooled.buffer();
        commands.forEach(command -> command.encode(buf));
        return buf.toString(StandardCharsets.US_ASCII).replace("\r\n", " ");
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void theFirstWriteIsTheWholeTransaction() {
        Transaction transaction = transaction();
        assertThat(transaction.commands()).hasSize(4);
        assertThat(written(transaction.commands())).isEqualTo("*1 $5 MULTI *4 $4 HSET $1 m $1 f $1 v "
                + "*4 $4 ZADD $1 s $1 1 $1 f *1 $4 EXEC ");
    }

    @Test
    void commandsWrittenAgainWithoutTheirMultiArePingsAndWithItTheTransactionAgain() {
        Transaction transaction = transaction();
        List<AsyncCommand<byte[], byte[], ?>> all = transaction.commands();
        written(all);
        // MULTI was answered before the connection dropped: Lettuce writes the rest again on the new one
        assertThat(written(all.subList(1, 4))).isEqualTo("*1 $4 PING *1 $4 PING *1 $4 PING ");
        assertThat(written(all.subList(3, 4))).isEqualTo("*1 $4 PING ");
        // nothing was answered: all of it again, MULTI first
        assertThat(written(all)).isEqualTo("*1 $5 MULTI *4 $4 HSET $1 m $1 f $1 v "
                + "*4 $4 ZADD $1 s $1 1 $1 f *1 $4 EXEC ");
    }

    @Test
    void anExecAnsweredWithAnythingButAnArrayIsNoExecution() {
        Transaction transaction = transaction();
        AsyncCommand<byte[], byte[], ?> exec = transaction.commands().get(3);
        exec.getOutput().set(java.nio.ByteBuffer.wrap(bytes("PONG")));
        exec.complete();
        assertThat(transaction.executed()).isCompletedExceptionally();
    }
}
