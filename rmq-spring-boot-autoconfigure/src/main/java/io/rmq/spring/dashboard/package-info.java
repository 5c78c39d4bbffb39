/**
 * The opt-in operations dashboard (Servlet or Reactive).
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.spring.dashboard;

import org.jspecify.annotations.NullMarked;
