package io.rmq.container.internal;

import java.util.ArrayList;
import java.util.List;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.internal.SlotConsumer.Outcome;
import io.rmq.observe.RmqInstrumentation.HandleScope;

/**
 * What an owned ORDERLY slot's lanes handled and its next step reports: acks, failures (each the message its lane
 * stopped at) and messages returned unstarted. Threads: the slot's report is guarded by the lock of
 * {@link OrderlySlots}; a step drains it into a copy of its own, which only the stepping thread touches, and puts it
 * back in front when the step's outcome is unknown (invariant 4 of {@link OrderlyStepper}).
 */
final class StepReport {

    /** A failed delivery, what its handler said, and its instrumentation scope. */
    record Failure(Delivery delivery, Outcome outcome, HandleScope scope) {
    }

    final List<Delivery> acked = new ArrayList<>();
    /** With an instrumentation: the scopes of {@link #acked}, in the same order. */
    final List<HandleScope> ackedScopes = new ArrayList<>();
    final List<Failure> failures = new ArrayList<>();
    final List<Delivery> returned = new ArrayList<>();
    /** Set on a drained copy: the slot's common lane held something then (its step takes nothing new). */
    boolean serial;
    /** Local ms when the oldest entry not sent yet joined the report; {@link Long#MAX_VALUE} while it is empty. */
    long since = Long.MAX_VALUE;

    /** Notes that entries joined the report, the oldest of them at {@code at} (the report's oldest time is kept). */
    void added(long at) {
        if (!isEmpty()) {
            since = Math.min(since, at);
        }
    }

    boolean isEmpty() {
        return acked.isEmpty() && failures.isEmpty() && returned.isEmpty();
    }

    /** Moves everything into a new report, leaving this one empty. */
    StepReport drain() {
        StepReport out = new StepReport();
        out.acked.addAll(acked);
        out.ackedScopes.addAll(ackedScopes);
        out.failures.addAll(failures);
        out.returned.addAll(returned);
        out.since = since;
        since = Long.MAX_VALUE;
        acked.clear();
        ackedScopes.clear();
        failures.clear();
        returned.clear();
        return out;
    }

    /** Puts an unsent report back in front of what was added since (sent again, in the same order). */
    void restore(StepReport unsent) {
        acked.addAll(0, unsent.acked);
        ackedScopes.addAll(0, unsent.ackedScopes);
        failures.addAll(0, unsent.failures);
        returned.addAll(0, unsent.returned);
        since = Math.min(since, unsent.since);
    }
}
