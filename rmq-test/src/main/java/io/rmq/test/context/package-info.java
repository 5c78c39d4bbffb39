/**
 * Test support for RMQ applications: {@code @RmqTest} gives a test a Redis (standalone or cluster) and helpers to
 * await and inspect messages.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.test.context;

import org.jspecify.annotations.NullMarked;
