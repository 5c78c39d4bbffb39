/**
 * Not API: key naming, slot routing and timeout helpers shared by the engine and its Spring layer; they may change in
 * any release.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.core.internal;

import org.jspecify.annotations.NullMarked;
