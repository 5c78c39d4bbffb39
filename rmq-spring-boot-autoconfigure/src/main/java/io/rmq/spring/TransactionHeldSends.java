package io.rmq.spring;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import io.rmq.producer.OutgoingMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Holds the sends a template makes inside a Spring transaction and makes them, in call order, once the transaction has
 * committed; drops them when it rolls back (also to a savepoint: only those made after it).
 * <p>
 * Threads: a transaction's {@link Held} is a resource bound to the transaction's thread (unbound while the transaction
 * is suspended, as by a {@code REQUIRES_NEW} inside it, so the inner transaction holds its own) and only that thread
 * touches it: the sends, and the transaction's callbacks. Redis I/O threads only complete the futures handed out and
 * call the failure handler.
 * <p>
 * Invariant: every held send is either written once, after its transaction committed, or dropped, its future completed
 * with {@link RmqSendDiscardedException}; never both, never neither. A send made once the commit is under way (from
 * another synchronization's {@code afterCommit}, or later: Spring runs {@code @TransactionalEventListener(AFTER_COMMIT)}
 * methods after synchronization has ended) is written at once: nothing would run it later.
 */
final class TransactionHeldSends {

    private static final Logger log = LoggerFactory.getLogger(TransactionHeldSends.class);

    /** How long a commit waits for the writes of held synchronous sends: as long as such a send waits itself. */
    private static final long AWAIT_MILLIS = TimeUnit.SECONDS.toMillis(60);

    private final RmqSendFailureHandler failureHandler;

    TransactionHeldSends(RmqSendFailureHandler failureHandler) {
        this.failureHandler = failureHandler;
    }

    /** Whether a send made now on this thread is held: inside an actual transaction that has not begun to commit. */
    boolean holding() {
        if (!TransactionSynchronizationManager.isSynchronizationActive()
                || !TransactionSynchronizationManager.isActualTransactionActive()) {
            return false;
        }
        return !(TransactionSynchronizationManager.getResource(this) instanceof Held held) || held.open;
    }

    /**
     * Holds a send (call only when {@link #holding()}).
     *
     * @param messages what the send writes, checked already, for the failure handler
     * @param send     makes the send, after the commit
     * @param awaited  whether the commit waits for the write (a synchronous send would have)
     * @return completes as the send after the commit does, or with {@link RmqSendDiscardedException}
     */
    <R> CompletableFuture<R> hold(List<OutgoingMessage> messages, Supplier<CompletableFuture<R>> send,
            boolean awaited) {
        Held held = (Held) TransactionSynchronizationManager.getResource(this);
        if (held == null) {
            held = new Held();
            TransactionSynchronizationManager.registerSynchronization(held);
            TransactionSynchronizationManager.bindResource(this, held);
        }
        HeldSend<R> heldSend = new HeldSend<>(messages, send, awaited);
        held.sends.add(heldSend);
        return heldSend.result;
    }

    /** One send waiting for its transaction. */
    private final class HeldSend<R> {

        final List<OutgoingMessage> messages;
        final Supplier<CompletableFuture<R>> send;
        final boolean awaited;
        final CompletableFuture<R> result = new CompletableFuture<>();

        HeldSend(List<OutgoingMessage> messages, Supplier<CompletableFuture<R>> send, boolean awaited) {
            this.messages = messages;
            this.send = send;
            this.awaited = awaited;
        }

        /** Writes; a failure goes to the failure handler, then to the future. Returns {@link #result}. */
        CompletableFuture<R> write() {
            CompletableFuture<R> written;
            try {
                written = send.get();
            }
            catch (RuntimeException ex) {
                written = CompletableFuture.failedFuture(ex);
            }
            written.whenComplete((value, error) -> {
                if (error == null) {
                    result.complete(value);
                    return;
                }
                Throwable cause = error instanceof CompletionException && error.getCause() != null
                        ? error.getCause() : error;
                // a batch refused part-way by a full Redis: the messages its other writes stored are not failures
                java.util.Set<Integer> stored = cause instanceof io.rmq.core.RmqRedisFullException full
                        ? java.util.Set.copyOf(full.storedIndexes()) : java.util.Set.of();
                for (int i = 0; i < messages.size(); i++) {
                    OutgoingMessage message = messages.get(i);
                    if (stored.contains(i)) {
                        continue;
                    }
                    try {
                        failureHandler.sendFailed(message, cause);
                    }
                    catch (RuntimeException handlerError) {
                        log.warn("The RmqSendFailureHandler failed on a message of topic '{}' ({}): {}",
                                message.topic(), LoggingSendFailureHandler.identity(message), handlerError.toString(),
                                handlerError);
                    }
                }
                result.completeExceptionally(cause);
            });
            return result;
        }

        void discard(String why) {
            String what = messages.size() == 1 ? "Not sent to topic '" + messages.get(0).topic() + "'"
                    : "A batch of " + messages.size() + " messages was not sent";
            result.completeExceptionally(new RmqSendDiscardedException(what + ": " + why));
        }
    }

    /** The sends of one transaction, and its synchronization. */
    private final class Held implements TransactionSynchronization {

        final List<HeldSend<?>> sends = new ArrayList<>();
        /** Savepoint -> how many sends were held when it was set. */
        final Map<Object, Integer> savepoints = new IdentityHashMap<>();
        /** False once the transaction has committed (the sends are being written) or ended. */
        boolean open = true;

        @Override
        public void suspend() {
            TransactionSynchronizationManager.unbindResourceIfPossible(TransactionHeldSends.this);
        }

        @Override
        public void resume() {
            TransactionSynchronizationManager.bindResource(TransactionHeldSends.this, this);
        }

        @Override
        public void savepoint(Object savepoint) {
            savepoints.put(savepoint, sends.size());
        }

        /** Drops what was held after the savepoint; one set before the first held send (unknown here) drops all. */
        @Override
        public void savepointRollback(Object savepoint) {
            int kept = savepoints.getOrDefault(savepoint, 0);
            savepoints.remove(savepoint);
            savepoints.replaceAll((other, count) -> Math.min(count, kept));
            List<HeldSend<?>> dropped = sends.subList(kept, sends.size());
            dropped.forEach(send -> send.discard("the transaction rolled back to a savepoint set before it"));
            dropped.clear();
        }

        @Override
        public void afterCommit() {
            writeAll();
        }

        @Override
        public void afterCompletion(int status) {
            TransactionSynchronizationManager.unbindResourceIfPossible(TransactionHeldSends.this);
            if (!open) {
                return;
            }
            if (status == STATUS_COMMITTED) {
                // registered while the commit was under way (another synchronization's afterCommit): no afterCommit
                writeAll();
                return;
            }
            open = false;
            String why = status == STATUS_ROLLED_BACK ? "the transaction rolled back"
                    : "the transaction's outcome is unknown (neither commit nor rollback was confirmed)";
            if (status != STATUS_ROLLED_BACK && !sends.isEmpty()) {
                log.warn("RMQ dropped {} send(s) held by a transaction whose outcome is unknown", sends.size());
            }
            sends.forEach(send -> send.discard(why));
            sends.clear();
        }

        /**
         * In call order, each write started once the one before it has ended: single sends, batches and their async
         * forms take different ways to Redis (a slot's single sends may wait for one under way and go out together;
         * a batch goes at once), so only this makes one identity's latest send the one that stays. The commit waits
         * for every write but a last asynchronous one, never longer than {@link #AWAIT_MILLIS} in all; past that the
         * rest go out without waiting for each other.
         */
        private void writeAll() {
            open = false;
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(AWAIT_MILLIS);
            // a transaction committed on a Redis I/O thread (code run in a callback of an RMQ future) must not wait
            // for replies that thread itself reads: its sends go out pipelined, in call order, without the wait
            boolean waiting = !(Thread.currentThread() instanceof io.netty.util.concurrent.FastThreadLocalThread);
            for (int i = 0; i < sends.size(); i++) {
                HeldSend<?> send = sends.get(i);
                CompletableFuture<?> written = send.write();
                boolean last = i == sends.size() - 1;
                if (waiting && (!last || send.awaited)) {
                    waiting = await(written, deadline);
                }
            }
            sends.clear();
        }

        /** Waits for a write until the deadline (its failure was reported already); false once the deadline passed. */
        private boolean await(CompletableFuture<?> write, long deadline) {
            try {
                write.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                return true;
            }
            catch (ExecutionException ex) {
                return true; // reported to the failure handler
            }
            catch (TimeoutException ex) {
                log.warn("A commit stopped waiting for the sends its transaction held after {} ms; they complete, or"
                        + " are reported as failed, when Redis answers", AWAIT_MILLIS);
                return false;
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }
}
