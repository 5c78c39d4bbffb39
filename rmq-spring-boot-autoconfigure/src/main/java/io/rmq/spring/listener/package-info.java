/**
 * The Spring listener infrastructure: the annotation post-processor, listener containers, their factory, customizers
 * and registry.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.spring.listener;

import org.jspecify.annotations.NullMarked;
