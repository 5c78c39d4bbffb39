/**
 * Not API: the producer the {@link io.rmq.Rmq} facade builds ({@link io.rmq.producer.RmqProducer}); it may change in
 * any release.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.producer.internal;

import org.jspecify.annotations.NullMarked;
