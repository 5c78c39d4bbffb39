/**
 * Not API: the engine's consumer and delivery ({@link io.rmq.consumer.RmqConsumer}, {@link io.rmq.consumer.Delivery}),
 * their handling and settlement, and {@link io.rmq.consumer.internal.SlotConsumer}, the listener containers' port;
 * it may change in any release.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.consumer.internal;

import org.jspecify.annotations.NullMarked;
