package io.rmq.spring.dashboard;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import org.springframework.beans.factory.ObjectProvider;

import java.util.Collection;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Reads the dashboard's figures from RMQ's meters: {@code messaging.client.sent.messages} (without error),
 * {@code rmq.handled.messages} (every outcome) and the percentiles of {@code rmq.delivery.lateness}. Looked up when
 * the page asks (every few seconds), never on the hot path.
 */
public class MicrometerDashboardMeters implements RmqDashboard.Meters {

    static final String DESTINATION = "messaging.destination.name";

    private final ObjectProvider<MeterRegistry> registry;

    public MicrometerDashboardMeters(ObjectProvider<MeterRegistry> registry) {
        this.registry = registry;
    }

    @Override
    public boolean available() {
        return registry.getIfUnique() != null;
    }

    @Override
    public RmqDashboard.@Nullable TopicMeters topic(String topic) {
        MeterRegistry meters = registry.getIfUnique();
        if (meters == null) {
            return null;
        }
        Double sent = sum(meters.find("messaging.client.sent.messages").tag(DESTINATION, topic).counters().stream()
                .filter(c -> {
                    String error = c.getId().getTag("error.type");
                    return error == null || error.equals("none");
                }).toList());
        Double handled = sum(meters.find("rmq.handled.messages").tag(DESTINATION, topic).counters());
        Collection<Timer> lateness = meters.find("rmq.delivery.lateness").tag(DESTINATION, topic).timers();
        return new RmqDashboard.TopicMeters(sent, handled, percentile(lateness, 0.5), percentile(lateness, 0.9),
                percentile(lateness, 0.99));
    }

    private static @Nullable Double sum(Collection<Counter> counters) {
        return counters.isEmpty() ? null : counters.stream().mapToDouble(Counter::count).sum();
    }

    /**
     * The largest value of this percentile over the timers (one per listener), in ms; null when none has values. A
     * timer that publishes the percentile (client-side, e.g. configured with Boot's
     * {@code management.metrics.distribution.percentiles}) gives it; otherwise it is estimated from the timer's
     * histogram (RMQ's default): the upper bound of the first bucket that holds that share of the recordings.
     */
    static Double percentile(Collection<Timer> timers, double percentile) {
        Double worst = null;
        for (Timer timer : timers) {
            Double ms = percentileOf(timer.takeSnapshot(), percentile);
            if (ms != null) {
                worst = worst == null ? ms : Math.max(worst, ms);
            }
        }
        return worst;
    }

    private static @Nullable Double percentileOf(HistogramSnapshot snapshot, double percentile) {
        for (ValueAtPercentile value : snapshot.percentileValues()) {
            if (Math.abs(value.percentile() - percentile) < 1e-9) {
                return value.value(TimeUnit.MILLISECONDS);
            }
        }
        CountAtBucket[] buckets = snapshot.histogramCounts();
        if (buckets.length == 0 || buckets[buckets.length - 1].count() == 0) {
            return null;
        }
        // cumulative counts: the last bucket holds every recording of the window
        double wanted = percentile * buckets[buckets.length - 1].count();
        for (CountAtBucket bucket : buckets) {
            if (bucket.count() >= wanted) {
                return bucket.bucket(TimeUnit.MILLISECONDS);
            }
        }
        return buckets[buckets.length - 1].bucket(TimeUnit.MILLISECONDS);
    }
}
