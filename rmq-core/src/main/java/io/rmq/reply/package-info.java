/**
 * Request-reply: a requester sends a request and gets back what its handler returned ({@link io.rmq.reply.RmqReplies}).
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.reply;

import org.jspecify.annotations.NullMarked;
