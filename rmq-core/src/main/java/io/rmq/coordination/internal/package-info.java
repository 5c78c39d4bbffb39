/**
 * Not API: the Redis slot coordinator the {@link io.rmq.Rmq} facade builds, and the membership lease it hands out; it
 * may change in any release.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.coordination.internal;

import org.jspecify.annotations.NullMarked;
