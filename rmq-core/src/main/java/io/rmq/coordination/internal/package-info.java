/**
 * Not API: how the {@link io.rmq.Rmq} facade makes its Redis slot coordinator; it may change in any release.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.coordination.internal;

import org.jspecify.annotations.NullMarked;
