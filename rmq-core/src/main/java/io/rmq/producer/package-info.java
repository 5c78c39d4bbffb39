/**
 * Sending: outgoing messages and the producer that writes them into their slots.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.producer;

import org.jspecify.annotations.NullMarked;
