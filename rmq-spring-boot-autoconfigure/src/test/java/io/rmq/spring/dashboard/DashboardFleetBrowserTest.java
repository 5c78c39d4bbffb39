package io.rmq.spring.dashboard;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.operations.OpsTestApplication;
import io.rmq.test.LogCapture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.Keys;
import org.openqa.selenium.interactions.Actions;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dashboard's addresses and layout as an operator of a fleet uses them, in headless Chromium at 1,280 pixels: a
 * topic's and an instance's own address (opened directly, back, forward, reload), topics of 32 and 256 slots without
 * a horizontal scroll bar, lateness as a duration, keyboard-only use (Tab, Enter, Escape in the confirm dialog), and
 * a second application instance in another JVM ({@link DashboardAppJvm}) on the same Redis. Screenshots go to
 * {@code target/dashboard-screenshots/1*.png}.
 */
@TestPropertySource(properties = {"rmq.topics.fleet-32.type=FIXED_TIME", "rmq.topics.fleet-32.slot-amount=32",
        "rmq.topics.fleet-256.type=FIXED_TIME", "rmq.topics.fleet-256.slot-amount=256"})
class DashboardFleetBrowserTest extends BrowserTestSupport {

    private static final int WIDTH = 1280;
    private static final String PREFIX = "fleet-" + UUID.randomUUID();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        useRedis(registry, PREFIX);
    }

    /**
     * What another instance of this application needs to join the same fleet: the same Redis, key prefix, topics and
     * dashboard settings (for {@link DashboardAppJvm#start}).
     */
    static Map<String, String> sameFleet() {
        return sameFleet(PREFIX, "rmq.topics.ops-backlog.type=FIXED_TIME", "rmq.topics.ops-backlog.slot-amount=4",
                "rmq.listeners.ops-orderly.mode=ORDERLY", "rmq.coordination.ownership-timeout=2s",
                "rmq.topics.fleet-32.type=FIXED_TIME", "rmq.topics.fleet-32.slot-amount=32",
                "rmq.topics.fleet-256.type=FIXED_TIME", "rmq.topics.fleet-256.slot-amount=256",
                "rmq.dashboard.enabled=true", "rmq.dashboard.read-only=false", "spring.main.banner-mode=off");
    }

    @Override
    Optional<Dimension> windowSize() {
        return Optional.of(new Dimension(WIDTH, 1400));
    }

    private String fragment() {
        return (String) js("return location.hash");
    }

    /** The page is no wider than the window: no horizontal scroll bar. */
    private void assertFitsTheWindow(String page) {
        Number scrollWidth = (Number) js("return document.documentElement.scrollWidth");
        Number innerWidth = (Number) js("return window.innerWidth");
        assertThat(innerWidth.intValue()).as("window width").isLessThanOrEqualTo(WIDTH);
        assertThat(scrollWidth.intValue()).as(page + ": page width within the %d px window", innerWidth.intValue())
                .isLessThanOrEqualTo(innerWidth.intValue());
    }

    private void waitForTopicPage(String topic, int slots) {
        waitUntil(d -> d.findElement(By.id("view-topic")).isDisplayed()
                && d.findElement(By.id("topic-name")).getText().startsWith(topic + " — ")
                && d.findElements(By.cssSelector("#slots .slot")).size() == slots);
    }

    private String activeTab() {
        return browser.findElement(By.cssSelector(".tab.active")).getAttribute("data-tab");
    }

    @Test
    void aTopicHasAnAddressThatWorksWithBackForwardAndReload() {
        // opened directly, as a colleague would open a link
        browser.get(url("#/topics/fleet-32/dead"));
        waitForTopicPage("fleet-32", 32);
        assertThat(activeTab()).isEqualTo("dead");
        assertThat(browser.getTitle()).startsWith("fleet-32");
        assertThat(browser.findElements(By.cssSelector("#topics tr[data-topic]"))).as("the topic's own figures")
                .hasSize(1);

        browser.findElement(By.cssSelector("button[data-tab='retries']")).click();
        waitUntil(d -> fragment().equals("#/topics/fleet-32/retries") && activeTab().equals("retries")
                && d.findElement(By.id("tab-retries")).isDisplayed());
        browser.navigate().refresh();
        waitForTopicPage("fleet-32", 32);
        assertThat(activeTab()).as("reload keeps the view").isEqualTo("retries");

        browser.navigate().back();
        waitUntil(d -> fragment().equals("#/topics/fleet-32/dead") && activeTab().equals("dead")
                && d.findElement(By.id("tab-dead")).isDisplayed());

        browser.findElement(By.cssSelector("#crumbs a[href='#/']")).click();
        waitUntil(d -> d.findElement(By.id("view-overview")).isDisplayed()
                && d.findElements(By.cssSelector("#topics tr[data-topic]")).size() > 3);
        browser.findElement(By.cssSelector("#topics tr[data-topic='fleet-256'] td.name a")).click();
        waitForTopicPage("fleet-256", 256);
        assertThat(fragment()).isEqualTo("#/topics/fleet-256");

        browser.navigate().back();
        waitUntil(d -> d.findElement(By.id("view-overview")).isDisplayed() && fragment().equals("#/"));
        browser.navigate().forward();
        waitForTopicPage("fleet-256", 256);

        // a name that needs escaping in the address, and one that does not exist
        browser.get(url("#/topics/" + "no%20such%2Ftopic"));
        waitUntil(d -> d.findElement(By.cssSelector("#topics tbody tr.empty")).getText()
                .contains("No topic no such/topic"));
    }

    @Test
    void topicsOf32And256SlotsFitA1280PixelWindow() {
        Instant later = Instant.now().plusSeconds(3600);
        for (int i = 0; i < 400; i++) {
            template.send(OutgoingMessage.fixedTime("fleet-256", "{\"n\":" + i + "}", later.plusSeconds(i)));
            if (i < 100) {
                template.send(OutgoingMessage.fixedTime("fleet-32", "{\"n\":" + i + "}", later.plusSeconds(i)));
            }
        }
        browser.get(url(""));
        waitUntil(d -> d.findElement(By.cssSelector("#topics tr[data-topic='fleet-256'] td.waiting")).getText()
                .equals("400"));
        assertFitsTheWindow("overview");
        Browser.screenshot(browser, "10-overview");

        browser.get(url("#/topics/fleet-32"));
        waitForTopicPage("fleet-32", 32);
        waitUntil(d -> d.findElements(By.cssSelector("#history figure.chart-box, #history .unavailable")).size() > 0);
        // read in one script: the bars are redrawn on every refresh
        int perSlot = 0;
        for (Object figures : (List<?>) js("return [...document.querySelectorAll('#slots .slot .figures')]"
                + ".map((e) => e.textContent)")) {
            perSlot += Integer.parseInt(((String) figures).split("·")[0].trim());
        }
        assertThat(perSlot).as("every waiting message in one of the 32 bars").isEqualTo(100);
        assertFitsTheWindow("topic of 32 slots");
        Browser.screenshot(browser, "11-topic-32-slots");

        browser.get(url("#/topics/fleet-256"));
        waitForTopicPage("fleet-256", 256);
        assertThat(browser.findElements(By.cssSelector("#slots .heat-grid .slot.heat"))).as("a heat grid")
                .hasSize(256);
        String title = (String) js("return document.querySelector(\"#slots .slot[data-slot='255']\").title");
        assertThat(title).matches("slot 255: \\d+ waiting, 0 in flight, 0 retrying, 0 dead");
        assertFitsTheWindow("topic of 256 slots");
        Browser.screenshot(browser, "12-topic-256-slots");
    }

    @Test
    void latenessReadsAsADuration() {
        // handled about 11 minutes after it fell due: the p50/p90/p99 bucket bound is one hour
        template.send(OutgoingMessage.fixedTime("ops-ordered", "late", Instant.now().minus(Duration.ofMinutes(11))));
        browser.get(url(""));
        String lateness = waitUntil(d -> {
            String text = d.findElement(By.cssSelector("#topics tr[data-topic='ops-ordered'] td.lateness")).getText();
            return text.equals("—") ? null : text;
        });
        assertThat(lateness).isEqualTo("≤ 1 h / ≤ 1 h / ≤ 1 h");
        assertThat(browser.findElement(By.id("topics")).getText()).doesNotContain("3,600,000");
    }

    @Test
    void everyControlWorksFromTheKeyboard() {
        try (LogCapture log = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE)) {
            handlers.failing = true;
            template.send(OutgoingMessage.fixedTime("ops-failing", "{\"keyboard\":1}", Instant.now()));
            await().atMost(PATIENCE).until(() -> rmq.admin().deadCount("ops-failing") == 1);
            browser.get(url(""));
            waitUntil(d -> d.findElement(By.cssSelector("#topics tr[data-topic='ops-failing'] td.dead")).getText()
                    .equals("1"));

            // Tab from the header's Refresh button to the topic's link, then Enter opens its page
            js("document.getElementById('refresh').focus()");
            Actions keys = new Actions(browser);
            for (int i = 0; i < 40 && !"ops-failing".equals(js(
                    "return document.activeElement.closest('tr') && document.activeElement.closest('tr').dataset.topic"));
                    i++) {
                keys.sendKeys(Keys.TAB).perform();
            }
            assertThat(js("return document.activeElement.tagName")).isEqualTo("A");
            assertThat((String) js("return getComputedStyle(document.activeElement).outlineStyle"))
                    .as("focus is visible").isEqualTo("solid");
            keys.sendKeys(Keys.ENTER).perform();
            waitUntil(d -> fragment().equals("#/topics/ops-failing")
                    && d.findElements(By.cssSelector("#dead tr.dead-row")).size() == 1);

            // a tab button answers Space, the next one Enter
            browser.findElement(By.cssSelector("button[data-tab='retries']")).sendKeys(Keys.SPACE);
            waitUntil(d -> fragment().equals("#/topics/ops-failing/retries"));
            browser.findElement(By.cssSelector("button[data-tab='dead']")).sendKeys(Keys.ENTER);
            waitUntil(d -> fragment().equals("#/topics/ops-failing")
                    && d.findElements(By.cssSelector("#dead tr.dead-row")).size() == 1);

            // Purge: its dialog starts on Cancel; Escape closes it and changes nothing
            js("document.getElementById('dead-requeue-all').focus()");
            keys.sendKeys(Keys.TAB).perform();
            assertThat(activeId()).isEqualTo("dead-purge");
            keys.sendKeys(Keys.ENTER).perform();
            waitUntil(d -> d.findElement(By.id("confirm")).isDisplayed());
            assertThat(activeId()).isEqualTo("confirm-cancel");
            keys.sendKeys(Keys.ESCAPE).perform();
            waitUntil(d -> !d.findElement(By.id("confirm")).isDisplayed());
            assertThat(rmq.admin().deadCount("ops-failing")).isEqualTo(1);
            assertThat(activeId()).as("focus goes back to the button").isEqualTo("dead-purge");

            // again, Tab to OK and Enter: purged
            keys.sendKeys(Keys.ENTER).perform();
            waitUntil(d -> d.findElement(By.id("confirm")).isDisplayed());
            keys.sendKeys(Keys.TAB).perform();
            assertThat(activeId()).isEqualTo("confirm-ok");
            Browser.screenshot(browser, "13-keyboard-confirm");
            keys.sendKeys(Keys.ENTER).perform();
            waitUntil(d -> d.findElement(By.id("notice")).getText().contains("Purge: 1 message"));
            await().atMost(PATIENCE).until(() -> rmq.admin().deadCount("ops-failing") == 0);
            waitUntil(d -> d.findElements(By.cssSelector("#dead tr.dead-row")).isEmpty());
            assertThat(log.warnings()).as("the one failure caused on purpose").hasSize(1);
        }
    }

    @Test
    void anInstanceHasAnAddressAndASecondInstanceInAnotherJvmServesTheSameTopics(@TempDir Path dir)
            throws Exception {
        try (DashboardAppJvm second = DashboardAppJvm.start(dir, sameFleet(), Duration.ofSeconds(120))) {
            template.send(OutgoingMessage.fixedTime("ops-backlog", "{\"from\":\"first\"}",
                    Instant.now().plusSeconds(3600)));
            // the second instance's page, opened at the topic's address, shows what the first one sent
            browser.get(second.url("/rmq#/topics/ops-backlog/waiting"));
            waitUntil(d -> d.findElements(By.cssSelector("#waiting tr.waiting-row .body-text")).stream()
                    .anyMatch(e -> e.getText().equals("{\"from\":\"first\"}")));
            assertFitsTheWindow("topic page of the second instance");

            // the instances list leads to each instance's own address
            browser.get(second.url("/rmq#/"));
            waitUntil(d -> d.findElements(By.cssSelector("#instances tr[data-instance]")).size() == 2);
            assertThat(browser.findElement(By.id("instances")).getText()).contains(String.valueOf(second.pid()),
                    String.valueOf(ProcessHandle.current().pid()));
            assertFitsTheWindow("overview");
            Browser.screenshot(browser, "14-overview-second-instance");
            // read in one script and clicked by id: the table is redrawn every 2 s
            String id = (String) js("return document.querySelector('#instances tr[data-instance]')"
                    + ".getAttribute('data-instance')");
            waitUntil(d -> {
                d.findElement(By.cssSelector("#instances tr[data-instance='" + id + "'] td.name a")).click();
                return true;
            });
            waitUntil(d -> d.findElement(By.id("view-instance")).isDisplayed()
                    && d.findElement(By.id("instance-facts")).getText().toLowerCase().contains("host"));
            assertThat(fragment()).isEqualTo("#/instances/" + id);
            assertFitsTheWindow("instance page");
            Browser.screenshot(browser, "15-instance");
        }
    }
}
