package io.rmq.spring.dashboard;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import io.rmq.Rmq;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.operations.OpsTestApplication;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.NoSuchElementException;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * What the dashboard's browser tests share: the {@link OpsTestApplication} on a random port with the dashboard
 * switched on and writable, a real Redis, one headless Chromium per test class ({@link Browser#start}, which fails
 * rather than skips under {@code RMQ_REQUIRE_BROWSER=1}), and the waits and scripts the scenarios are written with.
 * A subclass adds its own topics with {@code @TestPropertySource} (merged with these) and its own Redis key prefix
 * with a {@code @DynamicPropertySource} that calls {@link #useRedis}. JUnit runs the test classes one after another
 * on its main thread, so the one static {@link #browser} belongs to the class running.
 */
@ExtendWith(RedisServersExtension.class)
@DirtiesContext
@SpringBootTest(classes = OpsTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"rmq.history.flush-interval=1s", "rmq.topics.ops-backlog.type=FIXED_TIME",
                "rmq.topics.ops-backlog.slot-amount=4", "rmq.listeners.ops-orderly.mode=ORDERLY",
                "rmq.coordination.ownership-timeout=2s", "rmq.dashboard.enabled=true",
                "rmq.dashboard.read-only=false"})
abstract class BrowserTestSupport {

    static final Duration PATIENCE = Duration.ofSeconds(30);

    static WebDriver browser;

    @LocalServerPort
    int port;

    @Autowired
    RmqTemplate template;

    @Autowired
    Rmq rmq;

    @Autowired
    OpsTestApplication.Handlers handlers;

    /** This class's own key prefix, so that one class's messages are never another's. */
    static void useRedis(DynamicPropertyRegistry registry, String prefix) {
        RedisTopology.STANDALONE.springProperties(prefix).forEach((k, v) -> registry.add(k, () -> v));
    }

    /**
     * What another instance of this application needs to join the same fleet (for {@link DashboardAppJvm#start}): the
     * same Redis and key prefix, then {@code pairs} as {@code name=value}.
     */
    static Map<String, String> sameFleet(String prefix, String... pairs) {
        Map<String, String> properties = new LinkedHashMap<>(RedisTopology.STANDALONE.springProperties(prefix));
        for (String pair : pairs) {
            int eq = pair.indexOf('=');
            properties.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
        return properties;
    }

    @BeforeAll
    static void startBrowser() {
        browser = Browser.start();
    }

    @AfterAll
    static void quitBrowser() {
        if (browser != null) {
            browser.quit();
        }
    }

    /** The window each test starts at; empty keeps the one the browser started with (see {@link Browser#start}). */
    Optional<Dimension> windowSize() {
        return Optional.empty();
    }

    @BeforeEach
    void resizeWindow() {
        windowSize().ifPresent(size -> browser.manage().window().setSize(size));
    }

    String url(String fragment) {
        return "http://localhost:" + port + "/rmq" + fragment;
    }

    /** Waits until {@code condition} answers true or non-null; an element redrawn or not there yet is tried again. */
    <T> T waitUntil(Function<WebDriver, T> condition) {
        return new WebDriverWait(browser, PATIENCE).ignoring(StaleElementReferenceException.class)
                .ignoring(NoSuchElementException.class).until(condition::apply);
    }

    Object js(String script, Object... args) {
        return ((JavascriptExecutor) browser).executeScript(script, args);
    }

    String activeId() {
        return (String) js("return document.activeElement && document.activeElement.id");
    }
}
