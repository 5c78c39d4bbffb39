package io.rmq.spring.dashboard;

import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;

import io.rmq.Rmq;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.operations.OpsTestApplication;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The fleet panels against the issue-33 routes (instances, cluster-wide pauses; retries, in flight, history and
 * Redis where merged), in headless Chromium at 1,280 pixels, with a second instance in another JVM. Screenshots go to
 * {@code target/dashboard-screenshots/2*.png}.
 */
@ExtendWith(RedisServersExtension.class)
@DirtiesContext
@SpringBootTest(classes = OpsTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"rmq.topics.ops-backlog.type=FIXED_TIME", "rmq.topics.ops-backlog.slot-amount=4",
                "rmq.listeners.ops-orderly.mode=ORDERLY", "rmq.coordination.ownership-timeout=2s",
                "rmq.instances.heartbeat=1s", "rmq.dashboard.enabled=true", "rmq.dashboard.read-only=false"})
class DashboardFleetPanelsBrowserTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final String PREFIX = "panels-" + UUID.randomUUID();

    static WebDriver browser;

    @LocalServerPort
    int port;

    @Autowired
    RmqTemplate template;

    @Autowired
    Rmq rmq;

    @Autowired
    OpsTestApplication.Handlers handlers;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        RedisTopology.STANDALONE.springProperties(PREFIX).forEach((k, v) -> registry.add(k, () -> v));
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

    @BeforeEach
    void window() {
        browser.manage().window().setSize(new Dimension(1280, 1400));
    }

    private String url(String fragment) {
        return "http://localhost:" + port + "/rmq" + fragment;
    }

    private <T> T waitUntil(java.util.function.Function<WebDriver, T> condition) {
        return new WebDriverWait(browser, PATIENCE).ignoring(org.openqa.selenium.StaleElementReferenceException.class)
                .ignoring(org.openqa.selenium.NoSuchElementException.class).until(condition::apply);
    }

    private Object js(String script) {
        return ((JavascriptExecutor) browser).executeScript(script);
    }

    private void assertFitsTheWindow(String page) {
        assertThat(((Number) js("return document.documentElement.scrollWidth")).intValue()).as(page)
                .isLessThanOrEqualTo(((Number) js("return window.innerWidth")).intValue());
    }

    /** Clicks a button, then the confirm dialog's action. */
    private void clickAndConfirm(By button) {
        waitUntil(d -> {
            d.findElement(button).click();
            return true;
        });
        waitUntil(d -> d.findElement(By.id("confirm")).isDisplayed());
        browser.findElement(By.id("confirm-ok")).click();
    }

    @Test
    void twoInstancesAreListedAndAListenerIsPausedEverywhereFromAnInstancePage(@TempDir Path dir) throws Exception {
        java.util.Map<String, String> fleet = new java.util.LinkedHashMap<>(
                RedisTopology.STANDALONE.springProperties(PREFIX));
        fleet.put("rmq.topics.ops-backlog.type", "FIXED_TIME");
        fleet.put("rmq.topics.ops-backlog.slot-amount", "4");
        fleet.put("rmq.listeners.ops-orderly.mode", "ORDERLY");
        fleet.put("rmq.coordination.ownership-timeout", "2s");
        fleet.put("rmq.instances.heartbeat", "1s");
        fleet.put("rmq.dashboard.enabled", "true");
        fleet.put("rmq.dashboard.read-only", "false");
        try (DashboardAppJvm second = DashboardAppJvm.start(dir, fleet, Duration.ofSeconds(120))) {
            browser.get(url("#/"));
            waitUntil(d -> d.findElements(By.cssSelector("#instances tr[data-instance]")).size() == 2);
            assertThat(browser.findElement(By.id("instances")).getText()).contains(String.valueOf(second.pid()),
                    String.valueOf(ProcessHandle.current().pid()));
            assertFitsTheWindow("overview with two instances");
            Browser.screenshot(browser, "20-overview-two-instances");

            // the second instance's page, opened from its row
            WebElement row = browser.findElements(By.cssSelector("#instances tr[data-instance]")).stream()
                    .filter(r -> r.getText().contains(String.valueOf(second.pid()))).findFirst().orElseThrow();
            String id = row.getAttribute("data-instance");
            row.findElement(By.cssSelector("td.name a")).click();
            waitUntil(d -> d.findElement(By.id("view-instance")).isDisplayed() && !d.findElements(
                    By.cssSelector("#instance-listeners tr[data-listener='ops-worker']")).isEmpty());
            assertThat((String) js("return decodeURIComponent(location.hash)")).isEqualTo("#/instances/" + id);

            clickAndConfirm(By.cssSelector("#instance-listeners tr[data-listener='ops-worker'] button.pause-cluster"));
            waitUntil(d -> d.findElement(By.cssSelector("#instance-listeners tr[data-listener='ops-worker'] td.paused-cluster"))
                    .getText().equals("paused everywhere"));
            assertFitsTheWindow("instance page");
            Browser.screenshot(browser, "21-instance-paused-everywhere");

            // the overview lists the pause and says which pause is which for this instance's listener
            browser.get(url("#/"));
            waitUntil(d -> !d.findElements(By.cssSelector("#pauses tr[data-pause='listener:ops-worker']")).isEmpty());
            waitUntil(d -> d.findElement(By.cssSelector("#listeners tr[data-listener='ops-worker'] td.everywhere"))
                    .getText().equals("paused"));
            template.send(OutgoingMessage.priority("ops-work", "sent-while-paused-everywhere", 1));
            await().pollDelay(Duration.ofSeconds(3)).atMost(PATIENCE).until(() -> true);
            assertThat(handlers.worked).as("paused everywhere: this instance takes nothing")
                    .doesNotContain("sent-while-paused-everywhere");
            Browser.screenshot(browser, "22-overview-paused-everywhere");

            browser.findElement(By.cssSelector("#pauses tr[data-pause='listener:ops-worker'] button.resume-cluster"))
                    .click();
            waitUntil(d -> d.findElements(By.cssSelector("#pauses tr[data-pause]")).isEmpty());
            // handled by one of the two instances: the topic's waiting count drops to 0
            waitUntil(d -> d.findElement(By.cssSelector("#topics tr[data-topic='ops-work'] td.waiting")).getText()
                    .equals("0"));
        }
    }

    @Test
    void aTopicIsPausedEverywhereFromItsPageAndItsInFlightTabAnswers() {
        browser.get(url("#/topics/ops-backlog"));
        waitUntil(d -> d.findElement(By.id("topic-pause")).isDisplayed());
        clickAndConfirm(By.id("topic-pause"));
        waitUntil(d -> d.findElement(By.id("topic-paused")).isDisplayed()
                && d.findElement(By.id("topic-resume")).isDisplayed());
        assertThat(browser.findElement(By.id("notice")).getText()).contains("paused everywhere");
        Browser.screenshot(browser, "23-topic-paused-everywhere");
        browser.findElement(By.id("topic-resume")).click();
        waitUntil(d -> !d.findElement(By.id("topic-paused")).isDisplayed());

        browser.findElement(By.cssSelector("button[data-tab='in-flight']")).click();
        waitUntil(d -> d.findElement(By.cssSelector("#in-flight tbody")).getText().equals("Nothing in flight."));
        assertThat(browser.findElement(By.id("in-flight-range")).getText()).isEqualTo("none");
    }
}
