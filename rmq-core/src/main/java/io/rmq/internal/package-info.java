/**
 * Not API: the engine plumbing behind an {@link io.rmq.Rmq}, for RMQ's Spring layer, benchmarks and tests; it may
 * change in any release.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.internal;

import org.jspecify.annotations.NullMarked;
