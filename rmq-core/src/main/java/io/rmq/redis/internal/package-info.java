/**
 * Not API: RMQ's Redis plumbing (scripts, gateway, batching, wake-ups), used by the engine and its Spring layer; it
 * may change in any release. A few public members of API types still take or return these types (the facade's
 * {@code Rmq#redis()}, {@code redisAdmin()}, {@code wakeUps()} and the constructors it wires the engine with); each
 * says "Not API", and rmq-core's architecture test lists them exactly.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.redis.internal;

import org.jspecify.annotations.NullMarked;
