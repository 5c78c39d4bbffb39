/**
 * Micrometer meters of sends, handling and queue sizes (needs micrometer-core).
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.micrometer;

import org.jspecify.annotations.NullMarked;
