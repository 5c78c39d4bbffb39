/**
 * The Actuator health indicator of RMQ's Redis and listeners.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.spring.health;

import org.jspecify.annotations.NullMarked;
