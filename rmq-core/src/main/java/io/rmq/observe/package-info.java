/**
 * The instrumentation hooks RMQ calls on sends and deliveries, for meters, observations and tests.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.observe;

import org.jspecify.annotations.NullMarked;
