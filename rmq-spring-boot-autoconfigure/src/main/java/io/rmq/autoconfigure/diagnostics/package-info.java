/**
 * Failure analyzers that explain RMQ's start-up failures.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.autoconfigure.diagnostics;

import org.jspecify.annotations.NullMarked;
