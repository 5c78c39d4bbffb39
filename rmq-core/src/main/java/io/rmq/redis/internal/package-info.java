/**
 * Not API: RMQ's Redis plumbing (scripts, gateway, batching, wake-ups), used by the engine and its Spring layer (which
 * reaches the facade's through {@code io.rmq.internal.RmqInternals}); it may change in any release. A few public
 * members of API types still take or return these types (the listener containers' constructors and factories, and
 * {@code RmqConsumer#claim}); each says "Not API", and rmq-core's architecture test lists them exactly.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.redis.internal;

import org.jspecify.annotations.NullMarked;
