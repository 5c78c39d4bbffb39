package io.rmq.instances;

import java.time.Duration;

import io.rmq.core.RmqInvalidArgumentException;

/**
 * How an engine takes part in the instance registry.
 *
 * @param application the application's name, shown beside the instance (Spring: {@code spring.application.name})
 * @param heartbeat   how often the instance says it is alive and reads the cluster-wide pauses (one script each
 *                    time); it is taken for gone after {@value RmqInstances#MISSED_BEATS} missed beats. A cluster-wide
 *                    pause takes effect here within one heartbeat (plus the moment a pause takes)
 */
public record InstanceSettings(String application, Duration heartbeat) {

    public static final Duration DEFAULT_HEARTBEAT = Duration.ofSeconds(5);

    public InstanceSettings {
        if (application == null || application.isBlank()) {
            application = "rmq";
        }
        if (application.length() > 200) {
            throw new RmqInvalidArgumentException("application", application, "must be at most 200 characters");
        }
        if (heartbeat == null) {
            heartbeat = DEFAULT_HEARTBEAT;
        }
        if (heartbeat.toMillis() < 100 || heartbeat.compareTo(Duration.ofMinutes(5)) > 0) {
            throw new RmqInvalidArgumentException("heartbeat", heartbeat, "must be between 100 ms and 5 minutes");
        }
    }

    public InstanceSettings(String application) {
        this(application, DEFAULT_HEARTBEAT);
    }
}
