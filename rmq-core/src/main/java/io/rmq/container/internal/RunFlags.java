package io.rmq.container.internal;

/**
 * What a CONCURRENT container's threads obey: written by its lifecycle ({@code start}, {@code stop}) and by
 * {@code pause} / {@code resume} on the caller's thread, read by every thread of the container (poller, handlers,
 * watchdog). Flags, not scheduling state: their readers decide what to do about them.
 */
final class RunFlags {

    /** Between start and the end of stop. */
    volatile boolean running;
    /** From the start of stop: fetching ends, waits end early, handler threads end once the buffer is empty. */
    volatile boolean stopping;
    /** Between pause and resume: the poller takes nothing (see {@link RmqListenerContainer#pause()}). */
    volatile boolean paused;
}
