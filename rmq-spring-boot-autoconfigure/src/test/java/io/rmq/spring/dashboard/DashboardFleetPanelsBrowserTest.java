package io.rmq.spring.dashboard;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;

import io.rmq.admin.RedisFigures;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.operations.OpsTestApplication;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.interactions.Actions;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The fleet panels against the issue-33 routes (instances, cluster-wide pauses, in flight; retries with their last
 * errors, dead search, selections, Redis figures), in headless Chromium at 1,280 pixels, with a second instance in
 * another JVM. Screenshots go to {@code target/dashboard-screenshots/2*.png}.
 */
@TestPropertySource(properties = "rmq.instances.heartbeat=1s")
class DashboardFleetPanelsBrowserTest extends BrowserTestSupport {

    private static final String PREFIX = "panels-" + UUID.randomUUID();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        useRedis(registry, PREFIX);
    }

    @Override
    Optional<Dimension> windowSize() {
        return Optional.of(new Dimension(1280, 1400));
    }

    private void assertFitsTheWindow(String page) {
        assertThat(((Number) js("return document.documentElement.scrollWidth")).intValue()).as(page)
                .isLessThanOrEqualTo(((Number) js("return window.innerWidth")).intValue());
    }

    /**
     * Loads the page afresh at an address (not a fragment change: no focus or notice left from an earlier test), the
     * mouse off every control (a hovered button looks focused in a screenshot).
     */
    private void load(String fragment) {
        browser.get("about:blank");
        browser.get(url(fragment));
        new Actions(browser).moveToLocation(1, 1).perform();
    }

    /** Focuses a button, presses Enter, then in the confirm dialog (which starts on Cancel) Tab to OK: left open. */
    private void openConfirmByKeyboard(String buttonId, Actions keys) {
        js("document.getElementById('" + buttonId + "').focus()");
        assertThat(activeId()).isEqualTo(buttonId);
        keys.sendKeys(Keys.ENTER).perform();
        waitUntil(d -> d.findElement(By.id("confirm")).isDisplayed());
        assertThat(activeId()).as("the dialog starts on Cancel").isEqualTo("confirm-cancel");
        keys.sendKeys(Keys.TAB).perform();
        assertThat(activeId()).isEqualTo("confirm-ok");
    }

    /** Types into a search field and presses Enter (the field's own search key). */
    private void search(String field, String text) {
        WebElement input = browser.findElement(By.id(field));
        input.clear();
        input.sendKeys(text, Keys.ENTER);
    }

    /** The value beside a name in the Redis panel. */
    private String fact(String name) {
        return browser.findElement(By.xpath("//dl[@id='redis']//dt[text()='" + name + "']/following-sibling::dd"))
                .getText();
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
        java.util.Map<String, String> fleet = sameFleet(PREFIX, "rmq.topics.ops-backlog.type=FIXED_TIME",
                "rmq.topics.ops-backlog.slot-amount=4", "rmq.listeners.ops-orderly.mode=ORDERLY",
                "rmq.coordination.ownership-timeout=2s", "rmq.instances.heartbeat=1s", "rmq.dashboard.enabled=true",
                "rmq.dashboard.read-only=false");
        try (DashboardAppJvm second = DashboardAppJvm.start(dir, fleet, Duration.ofSeconds(120))) {
            browser.get(url("#/"));
            waitUntil(d -> d.findElements(By.cssSelector("#instances tr[data-instance]")).size() == 2);
            assertThat(browser.findElement(By.id("instances")).getText()).contains(String.valueOf(second.pid()),
                    String.valueOf(ProcessHandle.current().pid()));
            assertFitsTheWindow("overview with two instances");
            Browser.screenshot(browser, "20-overview-two-instances");

            // the second instance's page, opened from its row
            // read in one script: the table is redrawn every 2 s, so an element found earlier may be gone
            String id = (String) js("const r = [...document.querySelectorAll('#instances tr[data-instance]')].find("
                    + "r => r.textContent.includes('" + second.pid() + "')); return r && r.getAttribute('data-instance');");
            assertThat(id).isNotNull();
            waitUntil(d -> {
                d.findElement(By.cssSelector("#instances tr[data-instance='" + id + "'] td.name a")).click();
                return true;
            });
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

            waitUntil(d -> {
                d.findElement(By.cssSelector("#pauses tr[data-pause='listener:ops-worker'] button.resume-cluster"))
                        .click();
                return true;
            });
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

    @Test
    void aFailingMessageWaitingForItsRetryShowsItsLastErrorAndWhenItIsTriedAgain() {
        template.send(OutgoingMessage.fixedTime("ops-flaky", "flaky-body", Instant.now()).withId("flaky-1"));
        await().atMost(PATIENCE).until(() -> rmq.admin().stats("ops-flaky").retrying() == 1);

        load("#/topics/ops-flaky/retries");
        WebElement row = waitUntil(d -> d.findElement(By.cssSelector("#retries tr.retry-row")));
        assertThat(browser.findElements(By.cssSelector("#retries tr.retry-row"))).hasSize(1);
        assertThat(row.findElement(By.cssSelector("td.id")).getText()).isEqualTo("flaky-1");
        assertThat(row.findElement(By.cssSelector("td.error")).getText())
                .contains(OpsTestApplication.ON_PURPOSE + ": flaky-body");
        assertThat(row.findElement(By.cssSelector("td.body")).getText()).as("bodies stay hidden by default")
                .isEqualTo("—");
        // the backoff is five minutes: "in 5 min" (on a slow machine the page may be read up to half a minute later)
        assertThat(row.findElements(By.cssSelector("td.time .rel")).get(0).getText()).matches("in [45] min");
        assertThat(row.findElements(By.cssSelector("td.time .rel")).get(1).getText()).matches("now|\\d+ s ago");
        assertThat(browser.findElement(By.id("retries-range")).getText()).isEqualTo("1–1 of 1");
        assertFitsTheWindow("retries tab");
        Browser.screenshot(browser, "24-retries");
    }

    @Test
    void deadMessagesAreFoundByPrefixAndErrorTextAndRequeuedOrDeletedAsASelectionByKeyboard() {
        for (String body : new String[] {"order-1001", "order-1002", "refund-2001"}) {
            template.send(OutgoingMessage.fixedTime("ops-failing", body, Instant.now()));
        }
        await().atMost(PATIENCE).until(() -> rmq.admin().deadCount("ops-failing") == 3);
        Actions keys = new Actions(browser);
        try {
            load("#/topics/ops-failing/dead");
            waitUntil(d -> d.findElements(By.cssSelector("#dead tr.dead-row")).size() == 3);

            // by prefix of the body (these were sent without ids)
            search("dead-prefix", "order-");
            waitUntil(d -> d.findElements(By.cssSelector("#dead tr.dead-row")).size() == 2);
            assertThat(browser.findElement(By.id("dead-range")).getText()).isEqualTo("1–2 of 2");
            assertThat(browser.findElement(By.id("dead")).getText()).contains("order-1001", "order-1002")
                    .doesNotContain("refund-2001");

            // select the page with the keyboard: focus the header box, Space
            js("document.getElementById('dead-select-all').focus()");
            keys.sendKeys(Keys.SPACE).perform();
            waitUntil(d -> d.findElement(By.id("dead-selected")).getText().equals("2 selected"));
            assertThat(browser.findElements(By.cssSelector("#dead tbody input.select"))).allMatch(WebElement::isSelected);
            assertThat(browser.findElement(By.id("dead-select-all")).isSelected()).isTrue();
            assertFitsTheWindow("dead search by prefix");
            Browser.screenshot(browser, "25-dead-search-prefix-selected");

            // requeue the selection: handled this time
            handlers.failing = false;
            openConfirmByKeyboard("dead-requeue-selected", keys);
            assertThat(browser.findElement(By.id("confirm-text")).getText())
                    .isEqualTo("Requeue 2 selected dead messages of ops-failing?");
            Browser.screenshot(browser, "26-requeue-selected-confirm");
            keys.sendKeys(Keys.ENTER).perform();
            waitUntil(d -> d.findElement(By.id("notice")).getText().contains("Requeue selected: 2 messages"));
            await().atMost(PATIENCE).until(() -> handlers.handled.containsAll(java.util.List.of("order-1001",
                    "order-1002")));
            assertThat(rmq.admin().deadCount("ops-failing")).isEqualTo(1);
            waitUntil(d -> d.findElement(By.cssSelector("#dead tbody")).getText().equals("No dead message matches."));
            assertThat(browser.findElement(By.id("dead-selected")).getText()).isEmpty();

            // by error text, case-insensitive: the reason quotes the body in <b> tags, shown as text
            browser.findElement(By.id("dead-clear")).click();
            search("dead-error", "FAILS ON PURPOSE: <b>refund");
            waitUntil(d -> d.findElements(By.cssSelector("#dead tr.dead-row")).size() == 1
                    && d.findElement(By.cssSelector("#dead tr.dead-row td.error")).getText()
                    .endsWith(OpsTestApplication.ON_PURPOSE + ": <b>refund-2001</b>"));
            assertThat(browser.findElement(By.id("dead-prefix")).getAttribute("value")).isEmpty();
            Browser.screenshot(browser, "27-dead-search-error");

            // select the row's own box, delete the selection
            js("document.querySelector('#dead tr.dead-row input.select').focus()");
            keys.sendKeys(Keys.SPACE).perform();
            waitUntil(d -> d.findElement(By.id("dead-selected")).getText().equals("1 selected"));
            openConfirmByKeyboard("dead-delete-selected", keys);
            keys.sendKeys(Keys.ENTER).perform();
            waitUntil(d -> d.findElement(By.id("notice")).getText().contains("Delete selected: 1 message"));
            await().atMost(PATIENCE).until(() -> rmq.admin().deadCount("ops-failing") == 0);
            assertThat(rmq.admin().stats("ops-failing").waiting()).as("deleted, not requeued").isZero();
            assertThat(handlers.handled).doesNotContain("refund-2001");
        }
        finally {
            handlers.failing = true;
        }
    }

    @Test
    void aTopicsHistoryIsDrawnPerMinuteAndPerHourWithWhatWasSentAndHandled() {
        long sentBefore = sentInTheLastHour("ops-work");
        for (int i = 0; i < 5; i++) {
            template.send(OutgoingMessage.priority("ops-work", "history-" + i, 1));
        }
        await().atMost(PATIENCE).until(() -> handlers.worked.containsAll(
                java.util.stream.IntStream.range(0, 5).mapToObj(i -> "history-" + i).toList()));
        // written by the next flush (1 s here): the page's chart says what the route says
        await().atMost(PATIENCE).until(() -> sentInTheLastHour("ops-work") >= sentBefore + 5);

        load("#/topics/ops-work");
        waitUntil(d -> d.findElements(By.cssSelector("#history figure.chart-box")).size() == 4);
        assertThat(browser.findElements(By.cssSelector("#history svg.chart rect.col.sent"))).hasSize(60);
        String sent = browser.findElement(By.cssSelector("#history figure[data-series=sent] svg")).getDomAttribute(
                "aria-label");
        long shown = Long.parseLong(sent.replaceAll("^Sent: ([0-9,]+) in the last hour.*$", "$1").replace(",", ""));
        assertThat(shown).as(sent).isGreaterThanOrEqualTo(sentBefore + 5);
        assertThat(browser.findElement(By.cssSelector("#history figure[data-series=handled] .sum")).getText())
                .matches("[0-9,]+ in the last hour").isNotEqualTo("0 in the last hour");
        assertFitsTheWindow("history per minute");
        Browser.screenshot(browser, "29-history-minute");

        WebElement hour = browser.findElement(By.id("history-hour"));
        hour.sendKeys(Keys.ENTER);
        waitUntil(d -> d.findElements(By.cssSelector("#history svg.chart rect.col.sent")).size() == 24);
        assertThat(hour.getDomAttribute("aria-pressed")).isEqualTo("true");
        assertThat(browser.findElement(By.cssSelector("#history figure[data-series=sent] .sum")).getText())
                .endsWith("in the last day");
        Browser.screenshot(browser, "30-history-hour");
    }

    private long sentInTheLastHour(String topic) {
        return rmq.admin().history(topic, io.rmq.admin.TopicHistory.Resolution.MINUTE).points().stream()
                .mapToLong(io.rmq.admin.TopicHistory.Point::sent).sum();
    }

    @Test
    void theRedisPanelShowsTheServersVersionAndMode() {
        RedisFigures redis = rmq.admin().redis();
        load("#/");
        waitUntil(d -> !d.findElements(By.cssSelector("#redis dt")).isEmpty());
        assertThat(fact("Version")).isEqualTo(redis.version());
        assertThat(fact("Mode")).isEqualTo("standalone");
        assertThat(fact("Memory used")).matches("[\\d.,]+ (B|KiB|MiB|GiB|kB|MB|GB)");
        assertThat(fact("RMQ keys")).matches("≥? ?[\\d,]+");
        assertThat(redis.version()).matches("\\d+\\.\\d+\\.\\d+.*");
        assertThat(browser.findElement(By.id("redis-nodes")).isDisplayed()).as("no node table standalone").isFalse();
        js("document.getElementById('redis-card').scrollIntoView()");
        Browser.screenshot(browser, "28-redis");
    }
}
