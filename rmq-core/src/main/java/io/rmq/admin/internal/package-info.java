/**
 * Not API: the admin operations the {@link io.rmq.Rmq} facade builds, and the machinery behind
 * {@link io.rmq.admin.RmqAdmin} (locating a {@link io.rmq.admin.MessageRef}, the per-message actions, the dead-letter
 * operations); it may change in any release.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.admin.internal;

import org.jspecify.annotations.NullMarked;
