/**
 * Spring Boot auto-configuration of RMQ and its {@code rmq.*} configuration properties.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.autoconfigure;

import org.jspecify.annotations.NullMarked;
