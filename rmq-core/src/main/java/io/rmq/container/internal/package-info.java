/**
 * Not API: the listener containers, CONCURRENT and ORDERLY, that the {@link io.rmq.Rmq} facade builds (through
 * {@link io.rmq.container.internal.ListenerContainers}); it may change in any release.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.container.internal;

import org.jspecify.annotations.NullMarked;
