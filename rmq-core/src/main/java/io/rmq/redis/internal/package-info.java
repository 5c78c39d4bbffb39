/**
 * Not API: RMQ's Redis plumbing (scripts, gateway, batching, wake-ups), used by the engine and its Spring layer (which
 * reaches the facade's through {@code io.rmq.internal.RmqInternals}); it may change in any release. No public member
 * of an API type takes or returns these types (rmq-core's architecture test checks it): the engine's classes that
 * need them are made or reached through the internal packages of their own layers.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.redis.internal;

import org.jspecify.annotations.NullMarked;
