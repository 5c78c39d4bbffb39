/**
 * Micrometer Observations around sends and handler calls, with trace context propagation (needs micrometer-
 * observation).
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.micrometer.observation;

import org.jspecify.annotations.NullMarked;
