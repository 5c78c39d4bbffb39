/**
 * Periodic messages fired once across the cluster: {@code @RmqScheduled} methods and {@code rmq.schedules.*}
 * entries, their firing in Redis, and {@link io.rmq.spring.schedule.RmqSchedules} to list, pause and resume them.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.spring.schedule;

import org.jspecify.annotations.NullMarked;
