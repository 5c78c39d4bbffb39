/**
 * Topics, their types and definitions, body serialization, retry and rate-limit policies, and RMQ's
 * exceptions. Key naming, slot routing and timeout helpers are in {@code io.rmq.core.internal} (not API).
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.core;

import org.jspecify.annotations.NullMarked;
