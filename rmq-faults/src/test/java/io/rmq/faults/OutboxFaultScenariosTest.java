package io.rmq.faults;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.rmq.faults.outbox.OutboxFaultApp;
import io.rmq.test.TestPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The outbox across a crash, in separate JVMs: an application ({@link OutboxFaultApp}) commits rows with
 * {@code @Externalized} events to Modulith's JDBC registry and is killed with kill -9 after the commits and before
 * any send (its transport blocks and says so). Nothing is in Redis then, the publications are incomplete in the
 * registry. Restarted with {@code republish-outstanding-events-on-restart}, it sends them: each message is delivered
 * once to a consumer in a JVM of its own (an independent record), and every publication is completed. The registry
 * is PostgreSQL when installed ({@link TestPostgres}), otherwise (or with {@code -Dfaults.outbox.registry=h2}) an H2
 * file.
 */
class OutboxFaultScenariosTest extends FaultSuite {

    private static final int EVENTS = 5;

    /** Kept when the scenario fails: the application's and the consumer's logs are the evidence. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path work;

    @Test
    void eventsCommittedBeforeAKillDashNineAreSentAfterTheRestartAndDeliveredOnce() throws Exception {
        // -Dfaults.outbox.registry=h2: the H2 file even where PostgreSQL is installed
        boolean postgres = !"h2".equals(System.getProperty("faults.outbox.registry"))
                && (TestPostgres.installed() || "1".equals(System.getenv(TestPostgres.REQUIRE_ENV)));
        String url = postgres ? TestPostgres.shared().newDatabase("outbox_fault")
                // written at each commit (WRITE_DELAY=0), so a kill -9 loses no committed transaction; no lock file
                // left behind by the killed JVM
                : "jdbc:h2:file:" + work.resolve("registry") + ";WRITE_DELAY=0;FILE_LOCK=NO";
        String prefix = "outbox-" + UUID.randomUUID().toString().substring(0, 8);
        System.out.println("[faults] outbox kill -9 between commit and send: registry on "
                + (postgres ? "PostgreSQL" : "an H2 file") + ", work directory " + work);
        try (RedisNode redis = RedisNode.start(work, false)) {
            List<String> common = List.of("--spring.datasource.url=" + url,
                    "--spring.datasource.username=" + (postgres ? TestPostgres.USER : "sa"),
                    "--spring.modulith.events.jdbc.schema-initialization.enabled=true",
                    "--spring.data.redis.host=" + RedisNode.HOST, "--spring.data.redis.port=" + redis.port(),
                    "--rmq.key-prefix=" + prefix, "--rmq.topics." + OutboxFaultApp.TOPIC + ".type=FIXED_TIME",
                    "--rmq.topics." + OutboxFaultApp.TOPIC + ".slot-amount=4");

            // 1. commit, then die before sending
            AppProcess first = AppProcess.start(work, "app-1", common, "--faults.outbox.place=" + EVENTS,
                    "--faults.outbox.block-sends=true");
            try {
                first.awaitLines("SEND-BLOCKED ", EVENTS);
                assertThat(first.lines("COMMITTED ")).hasSize(EVENTS);
                first.kill();
            }
            finally {
                first.close();
            }
            assertThat(storedMessages(redis, prefix)).as("messages in Redis after the kill").isZero();
            assertThat(publications(url, postgres, "completion_date is null")).as("incomplete publications")
                    .isEqualTo(EVENTS);

            // 2. an independent consumer records every delivery; the restarted application re-sends
            try (ConsumerProcess consumer = ConsumerProcess.start(work, "consumer", Map.of("redis", redis.hostPort(),
                    "topic", OutboxFaultApp.TOPIC, "type", "FIXED_TIME", "slots", "4", "prefix", prefix,
                    "defaults", "true"));
                    AppProcess second = AppProcess.start(work, "app-2", common,
                            "--spring.modulith.events.republish-outstanding-events-on-restart=true")) {
                second.awaitLines("READY", 1);
                List<String> ids = IntStream.range(0, EVENTS).mapToObj(i -> "r-" + i).toList();
                await().atMost(Duration.ofSeconds(60)).until(() -> deliveries(consumer).keySet().containsAll(ids));
                // once each, and it stays once
                await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(20))
                        .until(() -> deliveries(consumer).values().stream().allMatch(count -> count == 1L));
                assertThat(deliveries(consumer)).containsOnlyKeys(ids);
                assertThat(second.stop(30)).as("the application stops").isTrue();
                assertThat(second.lines("ERROR")).isEmpty();
            }
            assertThat(publications(url, postgres, "completion_date is null")).as("incomplete publications").isZero();
            assertThat(publications(url, postgres, "completion_date is not null")).isEqualTo(EVENTS);
        }
    }

    /** Deliveries per id, from the consumer's record ({@code id,time} per line). */
    private static Map<String, Long> deliveries(ConsumerProcess consumer) throws IOException {
        if (!Files.exists(consumer.record())) {
            return Map.of();
        }
        return Files.readAllLines(consumer.record()).stream().filter(line -> !line.isBlank())
                .map(line -> line.substring(0, line.indexOf(',')))
                .collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
    }

    private static long storedMessages(RedisNode redis, String prefix) {
        RedisClient client = RedisClient.create(resources, redis.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            return connection.sync().keys(prefix + ":{" + OutboxFaultApp.TOPIC + ":*}:store").stream()
                    .mapToLong(key -> connection.sync().zcard(key)).sum();
        }
        finally {
            RedisNode.shutdown(client);
        }
    }

    private static long publications(String url, boolean postgres, String condition) throws Exception {
        try (Connection connection = DriverManager.getConnection(url, postgres ? TestPostgres.USER : "sa", "");
                Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("select count(*) from event_publication where "
                        + condition)) {
            result.next();
            return result.getLong(1);
        }
    }

    /** An {@link OutboxFaultApp} JVM; its output goes to {@code <name>.log} in the work directory. */
    private static final class AppProcess implements AutoCloseable {

        private final Process process;
        private final Path log;

        private AppProcess(Process process, Path log) {
            this.process = process;
            this.log = log;
        }

        static AppProcess start(Path workDir, String name, List<String> common, String... more) throws IOException {
            Path log = workDir.resolve(name + ".log");
            List<String> command = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                    "-cp", System.getProperty("java.class.path"), OutboxFaultApp.class.getName()));
            command.addAll(common);
            command.addAll(List.of(more));
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            return new AppProcess(process, log);
        }

        /** Waits (up to 90 s: a Spring Boot start on a busy machine) until {@code count} lines start with it. */
        void awaitLines(String start, int count) throws IOException {
            long deadline = System.currentTimeMillis() + 90_000;
            while (lines(start).size() < count) {
                if (!process.isAlive()) {
                    throw new IOException("the application exited early: " + Signals.tail(log, 40));
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IOException("no " + count + " '" + start + "' lines within 90 s: "
                            + Signals.tail(log, 40));
                }
                Signals.sleep(50);
            }
        }

        List<String> lines(String start) throws IOException {
            if (!Files.exists(log)) {
                return List.of();
            }
            return Files.readAllLines(log).stream().filter(line -> line.startsWith(start)
                    || start.equals("ERROR") && line.contains(" ERROR ")).toList();
        }

        /** kill -9: no shutdown of any kind. */
        void kill() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }

        /** Graceful stop (STOP on stdin), waiting up to {@code seconds}. */
        boolean stop(int seconds) throws IOException, InterruptedException {
            OutputStream stdin = process.getOutputStream();
            stdin.write("STOP\n".getBytes(StandardCharsets.UTF_8));
            stdin.flush();
            return process.waitFor(seconds, TimeUnit.SECONDS);
        }

        @Override
        public void close() {
            Signals.destroy(process);
        }
    }
}
