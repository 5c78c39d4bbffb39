/**
 * Not API: how the {@link io.rmq.Rmq} facade makes its instance registry; it may change in any release.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.instances.internal;

import org.jspecify.annotations.NullMarked;
