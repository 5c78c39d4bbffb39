/**
 * Ahead-of-time processing: the runtime hints a GraalVM native image of an RMQ application needs.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.spring.aot;

import org.jspecify.annotations.NullMarked;
