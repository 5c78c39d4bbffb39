/**
 * The fleet: every running engine lists itself in Redis with a heartbeat (application, host, pid, listeners, busy
 * handlers, ORDERLY slots owned) and honours the cluster-wide pauses of listeners and topics stored beside the list.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.instances;

import org.jspecify.annotations.NullMarked;
