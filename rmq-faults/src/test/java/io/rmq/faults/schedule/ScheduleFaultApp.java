package io.rmq.faults.schedule;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

import io.rmq.spring.annotation.RmqScheduled;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;

/**
 * The application JVM of the schedule scenario ({@code ScheduleFaultScenariosTest}); every instance runs the same three
 * schedules:
 * <ul>
 * <li>{@code tick}: every second, fire-once, the default 5 s threshold; each run prints {@code RUN tick <firing ms>
 * <started ms> <pid>}, takes {@value #TICK_RUN_MILLIS} ms (so that a kill -9 or a SIGSTOP can land in the middle of
 * it) and prints {@code FIRED tick <firing ms> <ended ms> <pid>} when it ends;</li>
 * <li>{@code late-once} and {@code late-skip}: every 4 s, threshold 1 s, misfire fire-once and skip; each run prints
 * {@code RUN} and {@code FIRED} at once.</li>
 * </ul>
 * Each line is written to stdout (a file) and flushed before the run goes on, so it survives a kill -9 of the JVM. With
 * {@code --faults.schedule.gate=true} the start stops before the schedules start (a phase before the scheduler's),
 * prints {@code GATE} and waits for a {@code GO} line on stdin: the scenario decides when this instance registers with
 * Redis. Prints {@code READY} once started; stops on SIGTERM (Spring Boot's shutdown hook) or when stdin closes.
 * <p>
 * Only the main thread reads stdin (the gate runs on it, during the start).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class ScheduleFaultApp {

    /** How long each {@code tick} run lasts. */
    public static final long TICK_RUN_MILLIS = 800;

    private static final BufferedReader STDIN = new BufferedReader(new InputStreamReader(System.in,
            StandardCharsets.UTF_8));
    private static final long PID = ProcessHandle.current().pid();

    public static class Jobs {

        @RmqScheduled(name = "tick", fixedRate = "PT1S")
        public void tick(Instant firing) throws InterruptedException {
            long ran = System.currentTimeMillis();
            print("RUN tick " + firing.toEpochMilli() + " " + ran + " " + PID);
            Thread.sleep(TICK_RUN_MILLIS);
            print("FIRED tick " + firing.toEpochMilli() + " " + System.currentTimeMillis() + " " + PID);
        }

        @RmqScheduled(name = "late-once", fixedRate = "4s", misfire = "fire-once", misfireThreshold = "1s")
        public void lateOnce(Instant firing) {
            ranAt("late-once", firing);
        }

        @RmqScheduled(name = "late-skip", fixedRate = "4s", misfire = "skip", misfireThreshold = "1s")
        public void lateSkip(Instant firing) {
            ranAt("late-skip", firing);
        }

        private static void ranAt(String schedule, Instant firing) {
            long ran = System.currentTimeMillis();
            print("RUN " + schedule + " " + firing.toEpochMilli() + " " + ran + " " + PID);
            print("FIRED " + schedule + " " + firing.toEpochMilli() + " " + ran + " " + PID);
        }
    }

    /** Holds the start, before the schedules start, until {@code GO} arrives on stdin. */
    static class Gate implements SmartLifecycle {

        private volatile boolean running;

        @Override
        public void start() {
            print("GATE");
            try {
                String line;
                while ((line = STDIN.readLine()) != null && !line.equals("GO")) {
                    // wait for GO
                }
                if (line == null) {
                    throw new IllegalStateException("stdin closed before GO");
                }
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
            running = true;
        }

        @Override
        public void stop() {
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        @Override
        public int getPhase() {
            // the listener registry's phase: the scheduler starts in the next one
            return RmqListenerEndpointRegistry.PHASE;
        }
    }

    @Bean
    Jobs jobs() {
        return new Jobs();
    }

    @Bean
    @ConditionalOnBooleanProperty("faults.schedule.gate")
    Gate gate() {
        return new Gate();
    }

    public static void main(String[] args) throws IOException {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(ScheduleFaultApp.class)
                .web(WebApplicationType.NONE).run(args);
        print("READY");
        while (STDIN.readLine() != null) {
            // until the scenario (its parent) goes away; SIGTERM ends the JVM through the shutdown hook
        }
        context.close();
    }

    static synchronized void print(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
