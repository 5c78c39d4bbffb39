/**
 * RMQ's Spring API: {@link io.rmq.spring.RmqTemplate} to send, {@link io.rmq.spring.RmqMessage} and {@link
 * io.rmq.spring.RmqHeaders} for listeners.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.spring;

import org.jspecify.annotations.NullMarked;
