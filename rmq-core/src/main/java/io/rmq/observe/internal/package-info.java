/**
 * Not API: the instrumentations the engine installs itself (the history counts and their flusher). Changed without
 * notice.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.observe.internal;

import org.jspecify.annotations.NullMarked;
