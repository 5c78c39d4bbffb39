package io.rmq.samples;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the sample scenario ({@code rmq.samples.*}).
 *
 * @param exitWhenDone exit the application once the scenario has finished (false: keep the listeners running)
 * @param waitTimeout  longest wait for one step of the scenario (e.g. a burst's renders) before it counts as failed
 */
@ConfigurationProperties("rmq.samples")
public record SamplesProperties(@DefaultValue("true") boolean exitWhenDone, @DefaultValue("20s") Duration waitTimeout) {
}
