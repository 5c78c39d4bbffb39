package io.rmq.container;

import java.time.Duration;
import java.util.concurrent.ThreadFactory;

import io.rmq.core.ConsumeMode;
import io.rmq.core.RateLimit;
import io.rmq.core.RmqInvalidArgumentException;
import org.jspecify.annotations.Nullable;

/**
 * How a listener container runs.
 *
 * @param id              container id (thread names, logs, registry)
 * @param concurrency     handler threads; also how many messages are handled at once
 * @param maxIdle         longest sleep without checking every slot (and popping those that hold anything), a safety
 *                        net for lost wake-up announcements and expired leases of consumers that died
 * @param shutdownTimeout how long a stop waits for running handlers before abandoning them to lease expiry
 * @param threadFactory   makes the poller and handler threads (virtual threads where the application uses them)
 * @param commandTimeout  longest the container waits for any Redis reply (a pop, an extension, a settle) before it
 *                        gives up on it and moves on; what that call leased comes back through lease expiry
 * @param mode            CONCURRENT (default) or ORDERLY (each slot owned by one instance, handled by one thread,
 *                        in order)
 * @param rateLimit       most messages all consumers of the topic together handle (enforced in Redis), or null
 * @param ownershipTimeout ORDERLY: how long an instance that stops renewing (died, paused, cut off) keeps its slots
 *                        before others take them over; it renews every fifth of it. CONCURRENT: how long an
 *                        instance that stops its heartbeat (every half of it) keeps its preferred share of the slots
 *                        (the share is hashed from the live instances)
 */
public record ContainerOptions(String id, int concurrency, Duration maxIdle, Duration shutdownTimeout,
        ThreadFactory threadFactory, Duration commandTimeout, ConsumeMode mode, @Nullable RateLimit rateLimit,
        Duration ownershipTimeout) {

    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_OWNERSHIP_TIMEOUT = Duration.ofSeconds(5);

    public ContainerOptions {
        if (id == null || id.isBlank()) {
            throw new RmqInvalidArgumentException("id", id, "must not be blank");
        }
        if (concurrency < 1 || concurrency > 1000) {
            throw new RmqInvalidArgumentException("concurrency", concurrency, "must be between 1 and 1000 (listener '" + id + "')");
        }
        if (maxIdle == null || maxIdle.toMillis() < 10) {
            throw new RmqInvalidArgumentException("maxIdle", maxIdle, "must be at least 10 ms (listener '" + id + "')");
        }
        if (shutdownTimeout == null || shutdownTimeout.isNegative()) {
            throw new RmqInvalidArgumentException("shutdownTimeout", shutdownTimeout, "must be zero or positive");
        }
        if (threadFactory == null) {
            threadFactory = Thread::new;
        }
        if (commandTimeout == null) {
            commandTimeout = DEFAULT_COMMAND_TIMEOUT;
        }
        if (commandTimeout.toMillis() < 100) {
            throw new RmqInvalidArgumentException("commandTimeout", commandTimeout,
                    "must be at least 100 ms (listener '" + id + "')");
        }
        if (mode == null) {
            mode = ConsumeMode.CONCURRENT;
        }
        if (ownershipTimeout == null) {
            ownershipTimeout = DEFAULT_OWNERSHIP_TIMEOUT;
        }
        if (ownershipTimeout.toMillis() < 500) {
            throw new RmqInvalidArgumentException("ownershipTimeout", ownershipTimeout,
                    "must be at least 500 ms (listener '" + id + "')");
        }
    }

    /** {@code threadFactory} null: {@code Thread::new}; {@code commandTimeout} null: the default. */
    public ContainerOptions(String id, int concurrency, Duration maxIdle, Duration shutdownTimeout,
            @Nullable ThreadFactory threadFactory, @Nullable Duration commandTimeout) {
        this(id, concurrency, maxIdle, shutdownTimeout, threadFactory, commandTimeout, ConsumeMode.CONCURRENT, null,
                DEFAULT_OWNERSHIP_TIMEOUT);
    }

    /** With the default command timeout; {@code threadFactory} null: {@code Thread::new}. */
    public ContainerOptions(String id, int concurrency, Duration maxIdle, Duration shutdownTimeout,
            @Nullable ThreadFactory threadFactory) {
        this(id, concurrency, maxIdle, shutdownTimeout, threadFactory, DEFAULT_COMMAND_TIMEOUT);
    }

    public static ContainerOptions of(String id, int concurrency) {
        return new ContainerOptions(id, concurrency, Duration.ofSeconds(30), Duration.ofSeconds(30), null);
    }

    public ContainerOptions withConcurrency(int concurrency) {
        return new ContainerOptions(id, concurrency, maxIdle, shutdownTimeout, threadFactory, commandTimeout, mode,
                rateLimit, ownershipTimeout);
    }

    public ContainerOptions withThreadFactory(ThreadFactory threadFactory) {
        return new ContainerOptions(id, concurrency, maxIdle, shutdownTimeout, threadFactory, commandTimeout, mode,
                rateLimit, ownershipTimeout);
    }

    public ContainerOptions withCommandTimeout(Duration commandTimeout) {
        return new ContainerOptions(id, concurrency, maxIdle, shutdownTimeout, threadFactory, commandTimeout, mode,
                rateLimit, ownershipTimeout);
    }

    public ContainerOptions withMode(ConsumeMode mode) {
        return new ContainerOptions(id, concurrency, maxIdle, shutdownTimeout, threadFactory, commandTimeout, mode,
                rateLimit, ownershipTimeout);
    }

    public ContainerOptions withRateLimit(@Nullable RateLimit rateLimit) {
        return new ContainerOptions(id, concurrency, maxIdle, shutdownTimeout, threadFactory, commandTimeout, mode,
                rateLimit, ownershipTimeout);
    }

    public ContainerOptions withOwnershipTimeout(Duration ownershipTimeout) {
        return new ContainerOptions(id, concurrency, maxIdle, shutdownTimeout, threadFactory, commandTimeout, mode,
                rateLimit, ownershipTimeout);
    }
}
