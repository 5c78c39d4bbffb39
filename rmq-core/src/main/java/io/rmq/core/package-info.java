/**
 * Topics, their types and definitions, slot routing, body serialization, retry and rate-limit policies, and RMQ's
 * exceptions.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.core;

import org.jspecify.annotations.NullMarked;
