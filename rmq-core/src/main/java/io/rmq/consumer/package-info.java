/**
 * Consuming: handlers, deliveries, failure policies and error handlers, and the consumer that pops, acks and fails
 * deliveries.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.consumer;

import org.jspecify.annotations.NullMarked;
