/**
 * Inspecting and repairing topics: statistics, where a message is, browsing waiting messages, and the dead-letter
 * operations (list, requeue, delete, purge). One message is named by a {@link io.rmq.admin.MessageRef}.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.admin;

import org.jspecify.annotations.NullMarked;
