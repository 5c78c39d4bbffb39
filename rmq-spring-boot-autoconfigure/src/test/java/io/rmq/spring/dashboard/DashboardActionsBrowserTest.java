package io.rmq.spring.dashboard;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;

import io.rmq.admin.MessageRef;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.operations.OperatorActionsListeners;
import io.rmq.spring.operations.OpsTestApplication;
import io.rmq.test.LogCapture;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.interactions.Actions;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The operator's actions on the page (issue 44, item 9) in headless Chromium at 1,280 pixels: run now and delete on the
 * Retries tab (a row, a selection), on the Waiting tab (a row), the dead messages grouped by error class, and requeue
 * or delete of everything a search matches after a confirmation that quotes the count; each action's audit line is
 * captured. Screenshots go to {@code target/dashboard-screenshots/4*.png}.
 */
@Import(OperatorActionsListeners.class)
class DashboardActionsBrowserTest extends BrowserTestSupport {

    private static final String PREFIX = "actions-" + UUID.randomUUID();
    private static final String AUDIT = "io.rmq.spring.dashboard.audit";

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        useRedis(registry, PREFIX);
    }

    @Override
    Optional<Dimension> windowSize() {
        return Optional.of(new Dimension(1280, 1100));
    }

    private void load(String fragment) {
        browser.get("about:blank");
        browser.get(url(fragment));
        new Actions(browser).moveToLocation(1, 1).perform();
    }

    /** Clicks what {@code by} finds (found again when the table was redrawn meanwhile). */
    private void click(By by) {
        waitUntil(d -> {
            d.findElement(by).click();
            return true;
        });
    }

    private void confirm() {
        waitUntil(d -> d.findElement(By.id("confirm")).isDisplayed());
        browser.findElement(By.id("confirm-ok")).click();
    }

    private String notice() {
        return browser.findElement(By.id("notice")).getText();
    }

    private By retryRow(String id, String then) {
        return By.xpath("//table[@id='retries']//tr[contains(@class,'retry-row')][td[contains(@class,'id')]='" + id
                + "']" + then);
    }

    @Test
    void aRetryIsRunNowFromItsRowAndASelectionOfRetriesIsDeleted() {
        try (LogCapture failures = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE);
                LogCapture audit = LogCapture.of(AUDIT)) {
            for (int i = 1; i <= 3; i++) {
                template.send(OutgoingMessage.fixedTime("ops-flaky", "flaky-body-" + i, Instant.now())
                        .withId("retry-" + i));
            }
            await().atMost(PATIENCE).until(() -> rmq.admin().stats("ops-flaky").retrying() == 3);
            load("#/topics/ops-flaky/retries");
            waitUntil(d -> d.findElements(By.cssSelector("#retries tr.retry-row")).size() == 3);
            assertThat(browser.findElement(retryRow("retry-1", "/td[contains(@class,'num')][2]")).getText())
                    .isEqualTo("1");

            click(retryRow("retry-1", "//button[contains(@class,'run-now')]"));
            waitUntil(d -> notice().equals("Run now: 1 message due now"));
            // handed out at once, failed again: attempt 2, a new five-minute backoff
            waitUntil(d -> {
                d.findElement(By.id("refresh")).click();
                return d.findElement(retryRow("retry-1", "/td[contains(@class,'num')][2]")).getText().equals("2");
            });
            assertThat(browser.findElement(retryRow("retry-2", "/td[contains(@class,'num')][2]")).getText())
                    .as("the others wait on").isEqualTo("1");

            click(retryRow("retry-2", "//input[contains(@class,'select')]"));
            click(retryRow("retry-3", "//input[contains(@class,'select')]"));
            waitUntil(d -> d.findElement(By.id("retries-selected")).getText().equals("2 selected"));
            new Actions(browser).moveToLocation(1, 1).perform();
            Browser.screenshot(browser, "40-retries-selected");
            click(By.id("retries-delete-selected"));
            waitUntil(d -> d.findElement(By.id("confirm")).isDisplayed());
            assertThat(browser.findElement(By.id("confirm-text")).getText())
                    .isEqualTo("Delete 2 selected retries of ops-flaky for good?");
            browser.findElement(By.id("confirm-ok")).click();
            waitUntil(d -> notice().equals("Delete selected: 2 messages"));
            waitUntil(d -> d.findElements(By.cssSelector("#retries tr.retry-row")).size() == 1);
            assertThat(rmq.admin().stats("ops-flaky").retrying()).isEqualTo(1);
            assertThat(browser.findElement(By.id("retries-selected")).getText()).isEmpty();

            assertThat(audit.messages()).hasSize(2);
            assertThat(audit.messages().get(0)).matches("RMQ dashboard: anonymous from [0-9.:a-f]+ POST"
                    + " topics/ops-flaky/retries/run-now \\(messages=1: slot \\d id retry-1\\) -> 200 count 1");
            assertThat(audit.messages().get(1)).contains("POST topics/ops-flaky/retries/delete (messages=2: ",
                    " id retry-2", " id retry-3", "-> 200 count 2");
            assertThat(failures.warnings()).isNotEmpty();
        }
    }

    @Test
    void aWaitingMessageIsRunNowAndAnotherDeletedFromTheWaitingTab() {
        Instant later = Instant.now().plus(Duration.ofHours(3));
        template.send(OutgoingMessage.fixedTime("ops-backlog", "later-1", later).withId("later-1"));
        template.send(OutgoingMessage.fixedTime("ops-backlog", "later-2", later.plusSeconds(60)).withId("later-2"));
        try (LogCapture audit = LogCapture.of(AUDIT)) {
            load("#/topics/ops-backlog/waiting");
            By later2 = By.xpath("//table[@id='waiting']//tr[td[contains(@class,'id')]='later-2']");
            waitUntil(d -> d.findElements(By.cssSelector("#waiting tr.waiting-row")).size() >= 2);
            assertThat(browser.findElement(later2).getText()).as("due in about 3 hours").contains("in ");
            click(By.xpath("//table[@id='waiting']//tr[td[contains(@class,'id')]='later-2']//button[contains(@class,"
                    + "'run-now')]"));
            waitUntil(d -> notice().equals("Run now: 1 message due now"));
            // due now: first in taking order
            waitUntil(d -> d.findElement(By.cssSelector("#waiting tr.waiting-row td.id")).getText().equals("later-2"));
            assertThat(rmq.admin().find(MessageRef.id("ops-backlog", "later-2")).waitingScore())
                    .isLessThanOrEqualTo((double) Instant.now().plusSeconds(1).toEpochMilli());
            new Actions(browser).moveToLocation(1, 1).perform();
            Browser.screenshot(browser, "41-waiting-run-now");

            click(By.xpath("//table[@id='waiting']//tr[td[contains(@class,'id')]='later-1']//button[contains(@class,"
                    + "'delete')]"));
            waitUntil(d -> d.findElement(By.id("confirm")).isDisplayed());
            assertThat(browser.findElement(By.id("confirm-text")).getText())
                    .isEqualTo("Delete this waiting message for good?");
            browser.findElement(By.id("confirm-ok")).click();
            waitUntil(d -> notice().equals("Delete: 1 message"));
            waitUntil(d -> d.findElements(By.xpath("//table[@id='waiting']//tr[td[contains(@class,'id')]='later-1']"))
                    .isEmpty());
            assertThat(rmq.admin().find(MessageRef.id("ops-backlog", "later-1")).isPending()).isFalse();
            assertThat(audit.messages()).hasSize(2);
            assertThat(audit.messages().get(1)).contains("POST topics/ops-backlog/waiting/delete (messages=1: slot ",
                    " id later-1) -> 200 count 1");
        }
    }

    @Test
    void deadMessagesAreGroupedByErrorClassAndWhatASearchMatchesIsRequeuedThenDeleted() {
        try (LogCapture failures = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE);
                LogCapture audit = LogCapture.of(AUDIT)) {
            for (int i = 0; i < 4; i++) {
                template.send(OutgoingMessage.fixedTime("ops-mixed", "state-" + i, Instant.now()));
            }
            for (int i = 0; i < 3; i++) {
                template.send(OutgoingMessage.fixedTime("ops-mixed", "arg-" + i, Instant.now()));
            }
            await().atMost(PATIENCE).until(() -> rmq.admin().deadCount("ops-mixed") == 7);
            load("#/topics/ops-mixed/dead");
            waitUntil(d -> d.findElements(By.cssSelector("#dead-groups button.group")).size() == 2);
            assertThat(browser.findElement(By.id("dead-groups")).getText().replaceAll("\\s+", " ")).isEqualTo("By error:"
                    + " java.lang.IllegalStateException 4 java.lang.IllegalArgumentException 3");
            assertThat(browser.findElement(By.id("dead-requeue-matching")).isEnabled()).as("search first").isFalse();
            Browser.screenshot(browser, "42-dead-groups");

            // a group searches for its class; the confirmation quotes the count the search found
            click(By.xpath("//div[@id='dead-groups']/button[code='java.lang.IllegalArgumentException']"));
            waitUntil(d -> d.findElements(By.cssSelector("#dead tr.dead-row")).size() == 3);
            assertThat(browser.findElement(By.id("dead-error")).getAttribute("value"))
                    .isEqualTo("java.lang.IllegalArgumentException");
            waitUntil(d -> d.findElement(By.id("dead-requeue-matching")).isEnabled());
            click(By.id("dead-requeue-matching"));
            waitUntil(d -> d.findElement(By.id("confirm")).isDisplayed());
            assertThat(browser.findElement(By.id("confirm-text")).getText()).isEqualTo("Requeue the 3 dead messages"
                    + " of ops-mixed whose error contains \"java.lang.IllegalArgumentException\"? (At most 1,000 per"
                    + " request; the answer says how many were requeued.)");
            assertThat(browser.findElement(By.id("confirm-ok")).getText()).isEqualTo("Requeue 3");
            Browser.screenshot(browser, "43-dead-requeue-matching-confirm");
            int before = OperatorActionsListeners.MIXED_ATTEMPTS.size();
            browser.findElement(By.id("confirm-ok")).click();
            waitUntil(d -> notice().equals("Requeue matching: 3 messages (3 matched then)"));
            await().atMost(PATIENCE).until(() -> OperatorActionsListeners.MIXED_ATTEMPTS.size() == before + 3);
            await().atMost(PATIENCE).until(() -> rmq.admin().deadCount("ops-mixed") == 7); // they died again

            // delete what matches "state-" by prefix
            WebElement error = browser.findElement(By.id("dead-error"));
            error.clear();
            browser.findElement(By.id("dead-prefix")).sendKeys("state-");
            click(By.id("dead-search"));
            waitUntil(d -> d.findElements(By.cssSelector("#dead tr.dead-row")).size() == 4
                    && d.findElement(By.id("dead-delete-matching")).isEnabled());
            click(By.id("dead-delete-matching"));
            waitUntil(d -> d.findElement(By.id("confirm")).isDisplayed());
            assertThat(browser.findElement(By.id("confirm-text")).getText()).startsWith("Delete the 4 dead messages"
                    + " of ops-mixed whose id or body starts with \"state-\" for good?");
            browser.findElement(By.id("confirm-ok")).click();
            waitUntil(d -> notice().equals("Delete matching: 4 messages (4 matched then)"));
            await().atMost(PATIENCE).until(() -> rmq.admin().deadCount("ops-mixed") == 3);
            waitUntil(d -> d.findElements(By.cssSelector("#dead-groups button.group")).size() == 1);

            assertThat(audit.messages()).hasSize(2);
            assertThat(audit.messages().get(0)).endsWith("POST topics/ops-mixed/dead/requeue-matching"
                    + " (error=java.lang.IllegalArgumentException, prefix=) -> 200 count 3 of 3 matched");
            assertThat(audit.messages().get(1)).endsWith("POST topics/ops-mixed/dead/delete-matching (error=,"
                    + " prefix=state-) -> 200 count 4 of 4 matched");
            assertThat(failures.warnings()).isNotEmpty();
        }
    }
}
