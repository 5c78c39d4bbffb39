/**
 * RMQ, a Redis-backed message queue: {@link io.rmq.Rmq} is the engine's entry point (producer, consumers, listener
 * containers, admin), usable without Spring.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq;

import org.jspecify.annotations.NullMarked;
