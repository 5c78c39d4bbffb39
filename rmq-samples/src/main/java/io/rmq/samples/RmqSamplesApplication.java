package io.rmq.samples;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * RMQ samples: the three stories of the original RMQ design and one of ORDERLY consumption, played by
 * {@link SampleDriver} against the listeners in {@code render}, {@code merchant}, {@code order} and {@code ledger}.
 * Story 3's orders and stock are in an in-memory H2 database that Spring Boot makes at start ({@code schema.sql},
 * {@code data.sql}); its orders are placed in transactions that hold their sends until the commit, and a schedule,
 * {@code order-stats}, reports on them every 2 s.
 * <p>
 * Without {@code spring.data.redis.*} connection properties an embedded Redis is started (see
 * {@link io.rmq.samples.redis.EmbeddedRedisEnvironmentPostProcessor}). By default the application then keeps running,
 * prints where its dashboard, health, metrics and RMQ endpoint are served, and keeps a little traffic flowing
 * ({@link LiveTraffic}); with {@code samples.exit-when-done=true} it exits when the scenario has finished, with
 * exit code 0 when every story ended as expected and 1 otherwise. Ctrl-C and SIGTERM end it the same way, with the
 * same exit code ({@link ExitOnSignal}).
 */
@SpringBootApplication
@EnableConfigurationProperties(SamplesProperties.class)
public class RmqSamplesApplication {

    public static void main(String[] args) {
        // installed first, so that a signal at any time after the scenario gets the same clean exit
        ExitOnSignal exitOnSignal = ExitOnSignal.install();
        SpringApplication application = new SpringApplication(RmqSamplesApplication.class);
        application.addInitializers(exitOnSignal::closes);
        ConfigurableApplicationContext context = application.run(args);
        if (context.getBean(SamplesProperties.class).exitWhenDone()) {
            // closes the context first (listeners stop, Redis connections close, the embedded Redis stops), then exits
            System.exit(SpringApplication.exit(context));
        }
    }
}
