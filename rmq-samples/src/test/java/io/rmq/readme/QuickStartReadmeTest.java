package io.rmq.readme;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.rmq.admin.MessageRef;
import io.rmq.autoconfigure.RmqProperties;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.guide.ListenerCustomizers;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.spring.listener.RmqListenerContainerFactory;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The README's Quick start is this package: each of its code blocks is the region between
 * {@code tag::<name>[]} and {@code end::<name>[]} of a source compiled here, copied verbatim, so the README cannot
 * show code that does not compile; the application those sources make runs once against real Redis; and the
 * figures the README and the listener guide (docs/listeners.md) state about defaults are computed from the defaults.
 */
@ExtendWith(RedisServersExtension.class)
class QuickStartReadmeTest {

    private static final Path SOURCES = Path.of("src", "test", "java", "io", "rmq", "readme");
    private static final Path CONFIG = Path.of("src", "test", "resources", "io", "rmq", "readme", "application.yml");

    /** Quick start blocks that come from a source here, by tag, with the language of their README block. */
    private static final Map<String, Path> SNIPPETS = Map.of(
            "quickstart-config", CONFIG,
            "quickstart-application", SOURCES.resolve("ShopApplication.java"),
            "quickstart-payload", SOURCES.resolve("OrderRef.java"),
            "quickstart-listener", SOURCES.resolve("OrderTimeouts.java"),
            "quickstart-sender", SOURCES.resolve("Checkout.java"));

    /** Blocks elsewhere in the documentation (README.md, docs/*.md) that come from a source here. */
    private static final Map<String, Path> OTHER_SNIPPETS = Map.of(
            "end-ordering", SOURCES.resolve("LedgerOrdering.java"),
            "container-customizers", Path.of("src", "test", "java", "io", "rmq", "guide", "ListenerCustomizers.java"),
            "class-level-listener", Path.of("src", "test", "java", "io", "rmq", "guide", "OrderEvents.java"),
            "testing-example", SOURCES.resolve("ShopTest.java"),
            "engine", Path.of("..", "rmq-core", "src", "test", "java", "io", "rmq", "readme",
                    "EngineReadmeExample.java"),
            // run by rmq-spring-boot-autoconfigure's OperationsRecipeSecurityTest
            "operations-security", Path.of("..", "rmq-spring-boot-autoconfigure", "src", "test", "java", "io", "rmq",
                    "spring", "operations", "OperationsSecurity.java"));

    @Test
    void everyQuickStartBlockIsACompiledSourceRegionOrTheDependency() throws IOException {
        List<String> blocks = codeBlocks(section(readme(), "## Quick start"));
        List<String> expected = new ArrayList<>();
        for (Map.Entry<String, Path> snippet : SNIPPETS.entrySet()) {
            String region = region(snippet.getValue(), snippet.getKey());
            assertThat(blocks).as("README Quick start block for %s (from %s)", snippet.getKey(), snippet.getValue())
                    .contains(region);
            expected.add(region);
        }
        // what is left: the Maven dependency and the install command, checked below
        List<String> others = blocks.stream().filter(block -> !expected.contains(block)).toList();
        assertThat(others).hasSize(2);
        assertThat(others).anySatisfy(block -> assertThat(block).contains("./mvnw install"));
        assertThat(others).anySatisfy(block -> assertThat(block)
                .contains("<artifactId>rmq-spring-boot-starter</artifactId>"));
    }

    @Test
    void theOtherCompiledBlocksAreTheirSourceRegions() throws IOException {
        List<String> blocks = codeBlocks(Docs.all());
        for (Map.Entry<String, Path> snippet : OTHER_SNIPPETS.entrySet()) {
            assertThat(blocks).as("documentation block for %s (from %s)", snippet.getKey(), snippet.getValue())
                    .contains(region(snippet.getValue(), snippet.getKey()));
        }
    }

    @Test
    void theDependencyInTheReadmeHasTheProjectsCoordinates() throws IOException {
        String pom = Files.readString(Path.of("..", "pom.xml"));
        Matcher parent = Pattern.compile("<artifactId>rmq-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(pom);
        assertThat(parent.find()).as("the root pom's version").isTrue();
        String dependency = "<dependency>\n    <groupId>io.rmq</groupId>\n"
                + "    <artifactId>rmq-spring-boot-starter</artifactId>\n    <version>" + parent.group(1)
                + "</version>\n</dependency>\n";
        assertThat(codeBlocks(section(readme(), "## Quick start"))).contains(dependency);
    }

    /**
     * The Quick start's install command installs every RMQ artifact the documentation tells an application to depend
     * on (the starter; rmq-test for its tests, in docs/testing.md), itself or through -am.
     */
    @Test
    void theInstallCommandInstallsEveryArtifactTheReadmeDependsOn() throws IOException {
        String readme = readme();
        Matcher install = Pattern.compile("\\./mvnw install -DskipTests -pl ([a-z0-9,-]+) -am\\b")
                .matcher(section(readme, "## Quick start"));
        assertThat(install.find()).as("the Quick start's install command").isTrue();
        // -am builds and installs the modules named and every module they depend on
        Pattern rmqArtifact = Pattern.compile("<groupId>io\\.rmq</groupId>\\s*<artifactId>([a-z0-9-]+)</artifactId>");
        List<String> installed = new ArrayList<>(List.of(install.group(1).split(",")));
        for (int i = 0; i < installed.size(); i++) {
            Path pom = Path.of("..", installed.get(i), "pom.xml");
            assertThat(pom).as("module %s", installed.get(i)).exists();
            Matcher needed = rmqArtifact.matcher(Files.readString(pom));
            while (needed.find()) {
                if (!needed.group(1).equals("rmq-parent") && !installed.contains(needed.group(1))) {
                    installed.add(needed.group(1));
                }
            }
        }
        Matcher dependency = rmqArtifact.matcher(Docs.all());
        List<String> dependedOn = new ArrayList<>();
        while (dependency.find()) {
            dependedOn.add(dependency.group(1));
        }
        assertThat(dependedOn).contains("rmq-spring-boot-starter", "rmq-test");
        assertThat(installed).containsAll(dependedOn);
    }

    @ParameterizedTest
    @EnumSource(RedisTopology.class)
    void theQuickStartApplicationHandlesWhatItSends(RedisTopology topology) {
        try (ConfigurableApplicationContext context = start(topology, "readme-" + UUID.randomUUID());
                // after the start: Boot's logging system resets Logback while the application starts
                LogCapture log = LogCapture.of(OrderTimeouts.class.getName())) {
            context.getBean(Checkout.class).placed("42", Instant.now());
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> log.messages().contains("Closing unpaid order 42"));
        }
    }

    /** An ORDERLY listener, as an application that ran before would have had. */
    static class OrderedLedger {
        @RmqListener(topic = "ledger", mode = "ORDERLY")
        void apply(String entry) {
        }
    }

    /** A CONCURRENT listener of the same topic, which starts only once ordering has ended. */
    static class ConcurrentLedger {
        final List<String> applied = new CopyOnWriteArrayList<>();

        @RmqListener(topic = "ledger")
        void apply(String entry) {
            applied.add(entry);
        }
    }

    @Test
    void endingOrderingAsTheReadmeShowsLetsAConcurrentListenerTakeTheTopic() {
        String prefix = "readme-" + UUID.randomUUID();
        try (ConfigurableApplicationContext ordered = start(prefix, OrderedLedger.class)) {
            assertThat(registered(ordered, prefix)).isEqualTo("FIXED_TIME:16:ORDERLY");
        }
        try (ConfigurableApplicationContext admin = start(prefix)) {
            // the mode outlives the ORDERLY listeners
            assertThat(registered(admin, prefix)).isEqualTo("FIXED_TIME:16:ORDERLY");
            admin.getBean(LedgerOrdering.class).stopOrdering("ledger");
            assertThat(registered(admin, prefix)).isEqualTo("FIXED_TIME:16:CONCURRENT");
        }
        try (ConfigurableApplicationContext concurrent = start(prefix, ConcurrentLedger.class)) {
            concurrent.getBean(RmqTemplate.class).sendFixedTime("ledger", "entry-1", Instant.now());
            ConcurrentLedger ledger = concurrent.getBean(ConcurrentLedger.class);
            await().atMost(Duration.ofSeconds(30)).until(() -> ledger.applied.contains("entry-1"));
        }
    }

    @Test
    void theCustomizersOfTheListenerGuideApplyToTheQuickStartApplication() {
        try (ConfigurableApplicationContext context = start("readme-" + UUID.randomUUID(),
                ListenerCustomizers.class);
                LogCapture log = LogCapture.of(OrderTimeouts.class.getName())) {
            assertThat(context.getBean(RmqListenerContainerFactory.class).getContainerCustomizers()).hasSize(2);
            context.getBean(Checkout.class).placed("43", Instant.now());
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> log.messages().contains("Closing unpaid order 43"));
        }
    }

    /** One handler thread; the first task holds it until the test lets it go. */
    static class MerchantTasks {
        final CountDownLatch firstMayFinish = new CountDownLatch(1);
        final List<String> started = new CopyOnWriteArrayList<>();

        @RmqListener(topic = "merchant-tasks", concurrency = "1")
        void handle(String task) throws InterruptedException {
            started.add(task);
            if (task.equals("first")) {
                firstMayFinish.await(60, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * The Message types section: priority orders what waits (here: what the listener fetched and has not started),
     * it does not overtake a message already in a handler.
     */
    @Test
    void priorityOrdersTheBacklogNotTheMessageInTheHandler() throws InterruptedException {
        try (ConfigurableApplicationContext context = start("readme-" + UUID.randomUUID(), MerchantTasks.class)) {
            RmqTemplate rmq = context.getBean(RmqTemplate.class);
            MerchantTasks tasks = context.getBean(MerchantTasks.class);
            rmq.sendPriority("merchant-tasks", "first", 1);
            await().atMost(Duration.ofSeconds(30)).until(() -> tasks.started.contains("first"));
            List<String> later = List.of("low-1", "low-2", "low-3", "urgent");
            for (String task : later) {
                rmq.sendPriority("merchant-tasks", task, task.equals("urgent") ? 100 : 1);
            }
            // all fetched by the listener while its only handler is busy
            await().atMost(Duration.ofSeconds(30)).until(() -> later.stream()
                    .allMatch(task -> rmq.admin().find(MessageRef.body("merchant-tasks", task)).inFlight()));
            // a round's messages reach the local buffer within ~20 ms of its pop's reply: a generous margin
            Thread.sleep(2000);
            assertThat(tasks.started).containsExactly("first");
            tasks.firstMayFinish.countDown();
            await().atMost(Duration.ofSeconds(30)).until(() -> tasks.started.size() == 5);
            assertThat(tasks.started.subList(0, 2)).containsExactly("first", "urgent");
            assertThat(tasks.started.subList(2, 5)).containsExactlyInAnyOrder("low-1", "low-2", "low-3");
        }
    }

    /** The ledger topic's definition as registered in Redis (the README's layout: {@code <prefix>:topics}). */
    private static Object registered(ConfigurableApplicationContext context, String prefix) {
        return context.getBean(StringRedisTemplate.class).opsForHash().get(prefix + ":topics", "ledger");
    }

    private static ConfigurableApplicationContext start(String prefix, Class<?>... sources) {
        return start(RedisTopology.STANDALONE, prefix, sources);
    }

    /** The Quick start application (and {@code sources}) on a test Redis, under its own key prefix. */
    private static ConfigurableApplicationContext start(RedisTopology topology, String prefix, Class<?>... sources) {
        List<String> args = new ArrayList<>(List.of("--spring.config.location=classpath:/io/rmq/readme/application.yml",
                "--rmq.key-prefix=" + prefix, "--rmq.topics.ledger.type=FIXED_TIME",
                "--spring.main.web-application-type=none", "--spring.main.banner-mode=off"));
        topology.springProperties().forEach((key, value) -> args.add("--" + key + "=" + value));
        return new SpringApplicationBuilder(ShopApplication.class).sources(sources).run(args.toArray(String[]::new));
    }

    /**
     * The README states where retries first appear how long a message that always fails takes to reach the dead
     * queue with the defaults: the sum of the backoffs before each retry, each shortened by up to the jitter.
     */
    @Test
    void theRetryFiguresInTheReadmeFollowFromTheDefaults() throws IOException {
        RmqProperties defaults = Binder.get(new StandardEnvironment()).bindOrCreate("rmq", RmqProperties.class);
        RetryPolicy retry = defaults.consumer().retryPolicy();
        assertThat(retry).isEqualTo(RetryPolicy.DEFAULT);
        BackoffPolicy backoff = retry.backoff();
        double longestMillis = 0;
        for (int failures = 1; failures <= retry.maxRetries(); failures++) {
            longestMillis += Math.min(backoff.max().toMillis(),
                    backoff.initial().toMillis() * Math.pow(backoff.multiplier(), failures - 1));
        }
        long longest = Math.round(longestMillis / 60_000);
        long shortest = Math.round(longestMillis * (1 - backoff.jitter()) / 60_000);
        String quickStart = section(readme(), "## Quick start");
        assertThat(quickStart)
                .contains(retry.maxRetries() + " retries")
                .contains("starting at " + backoff.initial().toSeconds() + " s")
                .contains("at most " + backoff.max().toMinutes() + " min")
                .contains("about " + longest + " min")
                .contains(shortest + " to " + longest + " min");
    }

    @Test
    void theListenerGuideStatesTheConsumerDefaults() throws IOException {
        RmqProperties.Consumer consumer = Binder.get(new StandardEnvironment())
                .bindOrCreate("rmq", RmqProperties.class).consumer();
        RmqProperties.Backoff backoff = consumer.backoff();
        assertThat(section(Docs.read("docs/listeners.md"), "# Listener guide")).contains(
                "`rmq.consumer.concurrency` (" + consumer.concurrency() + ")",
                "`rmq.consumer.batch-size` (" + consumer.batchSize() + ")",
                "`rmq.consumer.lease` (" + consumer.lease().toSeconds() + "s)",
                "`rmq.consumer.max-retries` (" + consumer.maxRetries() + ")",
                "`rmq.consumer.backoff.*` (" + backoff.initial().toSeconds() + "s, " + backoff.multiplier() + ", "
                        + backoff.max().toMinutes() + "m, " + backoff.jitter() + ")");
    }

    private static String readme() {
        return Docs.read("README.md");
    }

    private static String section(String markdown, String heading) {
        return Docs.section(markdown, heading);
    }

    private static List<String> codeBlocks(String markdown) {
        return Docs.codeBlocks(markdown);
    }

    private static String region(Path source, String tag) {
        return Docs.region(source, tag);
    }
}
