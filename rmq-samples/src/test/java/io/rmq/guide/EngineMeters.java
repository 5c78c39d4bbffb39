package io.rmq.guide;

import java.time.Duration;
import java.util.List;

import io.lettuce.core.AbstractRedisClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.micrometer.MicrometerInstrumentation;
import io.rmq.micrometer.RmqQueueSizeMeters;

/** docs/operations.md's meters without Spring, compiled so the engine's API it shows cannot rot. */
final class EngineMeters {

    private EngineMeters() {
    }

    static RmqQueueSizeMeters meters(AbstractRedisClient client, List<ListenerContainer> myContainers) {
        // tag::operations-engine-meters[]
        MeterRegistry registry = new SimpleMeterRegistry();   // or the application's registry
        Rmq rmq = Rmq.create(client, RmqOptions.DEFAULT.withInstrumentation(new MicrometerInstrumentation(registry)));
        RmqQueueSizeMeters sizes = new RmqQueueSizeMeters(rmq, Duration.ofSeconds(30), () -> myContainers);
        sizes.bindTo(registry); // close() stops the schedule and removes the gauges
        // end::operations-engine-meters[]
        return sizes;
    }
}
