package io.rmq.spring;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.rmq.spring.annotation.RmqListener;
import io.rmq.test.LateRedisServer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What two idle Spring instances cost Redis with their defaults (metrics with the queue-size gauges, the instance
 * registry, history), each with a CONCURRENT listener on a topic of 32 slots and an ORDERLY listener on one of 256:
 * every command the server ran over the window, counted with {@code INFO commandstats} (which counts the commands
 * scripts run too) on a server of this test's own. The window is 20 s here; {@code -Dfleet-idle-seconds=60} gives
 * BENCHMARKS.md's 60 s figure with the same code.
 */
class FleetIdleCostTest {

    private static final int WINDOW_SECONDS = Integer.getInteger("fleet-idle-seconds", 20);

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {

        @Bean
        Listeners listeners() {
            return new Listeners();
        }
    }

    static class Listeners {

        @RmqListener(topic = "fleet-concurrent", type = "FIXED_TIME", slotAmount = "32")
        void concurrent(String body) {
        }

        @RmqListener(topic = "fleet-orderly", type = "FIXED_TIME", slotAmount = "256", mode = "ORDERLY")
        void orderly(String body) {
        }
    }

    @Test
    void twoIdleInstancesWithTheirDefaultsCostRedisAboutTwentyCommandsPerSecondAtMost() throws Exception {
        try (LateRedisServer server = LateRedisServer.startOn(LateRedisServer.freePort());
                ConfigurableApplicationContext first = start(server.port(), "fleet-a");
                ConfigurableApplicationContext second = start(server.port(), "fleet-b")) {
            Thread.sleep(5_000); // start-up: topic registration, first polls, ORDERLY claims, first gauge reads
            Map<String, Long> before = commandStats(server.port());
            Thread.sleep(WINDOW_SECONDS * 1000L);
            Map<String, Long> after = commandStats(server.port());
            Map<String, Long> diff = new TreeMap<>();
            after.forEach((command, calls) -> {
                long d = calls - before.getOrDefault(command, 0L);
                if (d > 0) {
                    diff.put(command, d);
                }
            });
            diff.remove("info"); // this test's own reads
            long all = diff.values().stream().mapToLong(Long::longValue).sum();
            double perSecond = all / (double) WINDOW_SECONDS;
            System.out.printf("[fleet-idle-cost] two idle instances, %d s: %d commands (%.1f/s): %s%n",
                    WINDOW_SECONDS, all, perSecond, diff);
            // 20 commands/s, and the beats a window can catch at its edges (one more of each heartbeat per instance:
            // ORDERLY 5, CONCURRENT 6, registry 7 commands); the 60 s figure in BENCHMARKS.md is 18.2/s, and an
            // instance that read every slot for its gauges (2,592 commands per read) or stepped every idle ORDERLY
            // slot (8 commands each per max-idle) is far above it
            assertThat(all).as("commands of two idle instances over %d s (%.1f/s): %s", WINDOW_SECONDS, perSecond,
                    diff).isLessThanOrEqualTo(20L * WINDOW_SECONDS + 2 * (5 + 6 + 7));
        }
    }

    private static ConfigurableApplicationContext start(int port, String application) {
        return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .properties("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + port,
                        "spring.application.name=" + application, "rmq.key-prefix=fleet")
                .run();
    }

    /** {@code INFO commandstats} over a plain socket: calls per command. */
    private static Map<String, Long> commandStats(int port) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            OutputStream out = socket.getOutputStream();
            out.write("INFO commandstats\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(),
                    StandardCharsets.UTF_8));
            String header = in.readLine(); // $<length>
            int length = Integer.parseInt(header.substring(1));
            char[] body = new char[length];
            int read = 0;
            while (read < length) {
                int n = in.read(body, read, length - read);
                if (n < 0) {
                    break;
                }
                read += n;
            }
            Map<String, Long> calls = new HashMap<>();
            for (String line : new String(body, 0, read).split("\r?\n")) {
                if (line.startsWith("cmdstat_")) {
                    String name = line.substring(8, line.indexOf(':'));
                    String rest = line.substring(line.indexOf("calls=") + 6);
                    calls.put(name, Long.parseLong(rest.substring(0, rest.indexOf(','))));
                }
            }
            return calls;
        }
    }
}
