/**
 * Exclusive slot ownership for ORDERLY listeners, with its leases and fencing kept in Redis.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.coordination;

import org.jspecify.annotations.NullMarked;
