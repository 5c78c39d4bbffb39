/**
 * The engine's side of request-reply: the requester's inbox and the replies written to others'.
 */
@NullMarked
package io.rmq.reply.internal;

import org.jspecify.annotations.NullMarked;
