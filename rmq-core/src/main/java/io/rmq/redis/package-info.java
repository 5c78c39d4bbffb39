/**
 * All of RMQ's Redis access: its Lettuce client, the Lua scripts and the commands around them.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.redis;

import org.jspecify.annotations.NullMarked;
