/**
 * Annotations that declare listener methods ({@code @RmqListener}) and their replies.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.spring.annotation;

import org.jspecify.annotations.NullMarked;
