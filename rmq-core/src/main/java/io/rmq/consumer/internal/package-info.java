/**
 * Not API: how the {@link io.rmq.Rmq} facade makes consumers, and how the ORDERLY container claims their slots; it
 * may change in any release.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.consumer.internal;

import org.jspecify.annotations.NullMarked;
