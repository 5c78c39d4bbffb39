/**
 * RMQ as a Spring Modulith event externalization target: the crash-safe outbox (docs/outbox.md).
 */
@NullMarked
package io.rmq.modulith;

import org.jspecify.annotations.NullMarked;
