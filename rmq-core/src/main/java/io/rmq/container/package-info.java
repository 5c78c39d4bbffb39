/**
 * Listener containers: the threads that take a topic's due messages and call a handler, concurrently or in slot order
 * (ORDERLY).
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.container;

import org.jspecify.annotations.NullMarked;
