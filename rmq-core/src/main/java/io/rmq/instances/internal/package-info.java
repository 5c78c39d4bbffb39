/**
 * Not API: the instance registry the {@link io.rmq.Rmq} facade builds ({@link io.rmq.instances.RmqInstances}); it may
 * change in any release.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.instances.internal;

import org.jspecify.annotations.NullMarked;
