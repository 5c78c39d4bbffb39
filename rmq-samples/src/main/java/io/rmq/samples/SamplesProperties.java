package io.rmq.samples;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the sample scenario ({@code samples.*}).
 *
 * @param exitWhenDone exit the application once the scenario has finished, with exit code 0 when every story ended as
 *                     expected (false, the default: keep running and serving the dashboard until stopped)
 * @param waitTimeout  longest wait for one step of the scenario (e.g. a burst's renders) before it counts as failed
 * @param liveTraffic  when the application keeps running after the scenario, keep sending a little traffic of every
 *                     kind (and now and then a message that ends in the dead queue) for the dashboard and metrics
 */
@ConfigurationProperties("samples")
public record SamplesProperties(@DefaultValue("false") boolean exitWhenDone, @DefaultValue("20s") Duration waitTimeout,
        @DefaultValue("true") boolean liveTraffic) {
}
