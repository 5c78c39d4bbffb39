package io.rmq.container.internal;

import io.rmq.container.ContainerOptions;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;

/**
 * A container's handler threads: {@code concurrency} threads from the options' thread factory, named
 * {@code <id>-<kind>-<i>}, each running the container's work loop. As a {@linkplain ContainerWatchdog.Check watchdog
 * check} it replaces a thread that died (a {@code Throwable} escaped its top): an ERROR names the listener and the
 * thread, and the repair is counted; a container is never left a thread short. What a dying thread held is the work
 * loop's to end, at its top, before it dies.
 * <p>
 * Threads: {@link #threads} and {@link #stopped} are guarded by this object's monitor: the container's lifecycle
 * starts and stops them, the watchdog's timer thread replaces dead ones; no thread is joined under the monitor.
 */
final class HandlerThreads implements ContainerWatchdog.Check {

    private final ContainerOptions options;
    private final String kind;
    private final Runnable work;
    private final ContainerWatchdog watchdog;
    private final String topic;
    private final Logger log;

    private final List<Thread> threads = new ArrayList<>();
    private boolean stopped = true;

    /** {@code kind}: the thread names' middle part ({@code handler}); {@code log}: the container's logger. */
    HandlerThreads(ContainerOptions options, String kind, Runnable work, ContainerWatchdog watchdog, String topic,
            Logger log) {
        this.options = options;
        this.kind = kind;
        this.work = work;
        this.watchdog = watchdog;
        this.topic = topic;
        this.log = log;
    }

    synchronized void start() {
        stopped = false;
        threads.clear();
        for (int i = 0; i < options.concurrency(); i++) {
            threads.add(startThread(options.id() + "-" + kind + "-" + i));
        }
    }

    private Thread startThread(String name) {
        Thread thread = options.threadFactory().newThread(work);
        thread.setName(name);
        thread.start();
        return thread;
    }

    /** Replaces every handler thread that has died (watchdog, timer thread). */
    @Override
    public synchronized void check(long now) {
        for (int i = 0; i < threads.size() && !stopped; i++) {
            Thread thread = threads.get(i);
            if (!thread.isAlive()) {
                watchdog.repaired();
                log.error("RMQ listener container '{}' (topic '{}'): handler thread {} has died; starting a new one",
                        options.id(), topic, thread.getName());
                threads.set(i, startThread(thread.getName()));
            }
        }
    }

    /** No thread is replaced after this; returns the threads to end. */
    private synchronized List<Thread> stopping() {
        stopped = true;
        return List.copyOf(threads);
    }

    /** Stops replacing threads, interrupts them all, and waits for each at most {@code eachMillis}. */
    void interruptAndJoin(long eachMillis) {
        List<Thread> all = stopping();
        for (Thread thread : all) {
            thread.interrupt();
        }
        for (Thread thread : all) {
            ContainerThreads.joinUntil(thread, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(eachMillis));
        }
    }

    /** Stops replacing threads and interrupts them all, without waiting. */
    void interrupt() {
        for (Thread thread : stopping()) {
            thread.interrupt();
        }
    }

    /** Stops replacing threads and waits for them all to end, at most until {@code deadlineNanos}. */
    void joinUntil(long deadlineNanos) {
        for (Thread thread : stopping()) {
            ContainerThreads.joinUntil(thread, deadlineNanos);
        }
    }
}
