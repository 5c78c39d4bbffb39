/**
 * Operations on topics and listeners, shared by the Actuator {@code rmq} endpoint and the dashboard.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.spring.operations;

import org.jspecify.annotations.NullMarked;
