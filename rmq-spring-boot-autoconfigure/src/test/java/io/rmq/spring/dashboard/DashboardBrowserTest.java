package io.rmq.spring.dashboard;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import io.rmq.admin.MessageRef;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.operations.OpsTestApplication;
import io.rmq.test.LogCapture;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebElement;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dashboard as a person uses it: a real Servlet application on a random port, a real Redis with real messages, the
 * page in headless Chromium. Screenshots go to {@code target/dashboard-screenshots/}.
 */
@TestPropertySource(properties = {"rmq.topics.ops-later.type=FIXED_TIME", "rmq.topics.ops-later.slot-amount=2"})
class DashboardBrowserTest extends BrowserTestSupport {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        useRedis(registry, "browser-" + UUID.randomUUID());
    }

    private void open() {
        browser.get(url(""));
        waitUntil(d -> !d.findElements(By.cssSelector("#topics tr[data-topic]")).isEmpty());
    }

    private String cell(String topic, String column) {
        return browser.findElement(By.cssSelector("#topics tr[data-topic='" + topic + "'] td." + column)).getText();
    }

    private void waitForCell(String topic, String column, String expected) {
        waitUntil(d -> {
            try {
                return cell(topic, column).equals(expected);
            }
            catch (org.openqa.selenium.StaleElementReferenceException | org.openqa.selenium.NoSuchElementException ex) {
                return false; // the table was redrawn between finding and reading
            }
        });
    }

    private WebElement listenerRow(String id) {
        return browser.findElement(By.cssSelector("#listeners tr[data-listener='" + id + "']"));
    }

    private void waitForListenerState(String id, String state) {
        waitUntil(d -> {
            try {
                return listenerRow(id).findElement(By.cssSelector(".state")).getText().equals(state);
            }
            catch (org.openqa.selenium.StaleElementReferenceException ex) {
                return false;
            }
        });
    }

    /** Types into a field once it can take keys (a tab's pane shows after the address change the click made). */
    private void type(By locator, String text) {
        waitUntil(d -> {
            try {
                d.findElement(locator).sendKeys(text);
                return true;
            }
            catch (org.openqa.selenium.StaleElementReferenceException | org.openqa.selenium.NoSuchElementException
                    | org.openqa.selenium.ElementNotInteractableException ex) {
                return false;
            }
        });
    }

    /** Clicks what {@code locator} finds once it is there and clickable (the tables are redrawn every 2 s). */
    private void click(By locator) {
        waitUntil(d -> {
            try {
                d.findElement(locator).click();
                return true;
            }
            catch (org.openqa.selenium.StaleElementReferenceException | org.openqa.selenium.NoSuchElementException
                    | org.openqa.selenium.ElementNotInteractableException ex) {
                return false;
            }
        });
    }

    @Test
    void thePageShowsTheRightCountsSlotsAndWaitingMessagesInTakingOrder() {
        Instant due = Instant.now().plusSeconds(3600);
        for (int i = 0; i < 7; i++) {
            template.send(OutgoingMessage.fixedTime("ops-backlog", "{\"order\":" + i + "}", due.plusSeconds(i)));
        }
        open();
        waitForCell("ops-backlog", "waiting", "7");
        assertThat(cell("ops-backlog", "in-flight")).isEqualTo("0");
        assertThat(cell("ops-backlog", "dead")).isEqualTo("0");
        assertThat(browser.findElement(By.cssSelector("#topics tr[data-topic='ops-backlog']")).getText())
                .contains("FIXED_TIME");
        // the ORDERLY listener owns every slot of its topic (one instance)
        waitUntil(d -> listenerRow("ops-orderly").findElements(By.cssSelector(".slot-chip")).size() == 4);
        assertThat(listenerRow("ops-worker").getText()).contains("ops-work", "CONCURRENT", "running");

        click(By.cssSelector("#topics tr[data-topic='ops-backlog'] td.name"));
        waitUntil(d -> d.findElements(By.cssSelector("#slots .slot")).size() == 4);
        int perSlot = 0;
        for (WebElement slot : browser.findElements(By.cssSelector("#slots .slot .figures"))) {
            perSlot += Integer.parseInt(slot.getText().split("·")[0]);
        }
        assertThat(perSlot).isEqualTo(7);
        Browser.screenshot(browser, "01-overview");

        click(By.cssSelector("button[data-tab='waiting']"));
        waitUntil(d -> d.findElements(By.cssSelector("#waiting tr.waiting-row")).size() == 7);
        List<String> bodies = browser.findElements(By.cssSelector("#waiting tr.waiting-row .body-text")).stream()
                .map(WebElement::getText).toList();
        assertThat(bodies).containsExactly("{\"order\":0}", "{\"order\":1}", "{\"order\":2}", "{\"order\":3}",
                "{\"order\":4}", "{\"order\":5}", "{\"order\":6}");
        Browser.screenshot(browser, "02-waiting");
    }

    @Test
    void aDeadMessageIsRequeuedFromThePageAndThenHandled() {
        String body = "{\"order\":\"<img src=x onerror=window.__xss=1>\"}";
        try (LogCapture log = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE)) {
            handlers.failing = true;
            // sent with an id and a header: the row shows both as text, and its requeue names the message by its id
            template.send(OutgoingMessage.fixedTime("ops-failing", body, Instant.now()).withId("order-<i>7</i>")
                    .withHeader("tenant", "<img src=x onerror=window.__xss=2>"));
            await().atMost(PATIENCE).until(() -> rmq.admin().deadCount("ops-failing") == 1);
            open();
            waitForCell("ops-failing", "dead", "1");
            click(By.cssSelector("#topics tr[data-topic='ops-failing'] td.name"));
            waitUntil(d -> d.findElements(By.cssSelector("#dead tr.dead-row")).size() == 1);
            WebElement row = browser.findElement(By.cssSelector("#dead tr.dead-row"));
            assertThat(row.findElement(By.cssSelector(".body-text")).getText()).as("shown as text").isEqualTo(body);
            assertThat(row.findElement(By.cssSelector("td.id")).getText()).isEqualTo("order-<i>7</i>");
            assertThat(row.findElement(By.cssSelector("td.headers dt")).getText()).isEqualTo("tenant");
            assertThat(row.findElement(By.cssSelector("td.headers dd")).getText())
                    .isEqualTo("<img src=x onerror=window.__xss=2>");
            assertThat(row.findElement(By.cssSelector("td.error")).getText()).contains("fails on purpose: <b>" + body
                    + "</b>");
            assertThat(row.getText()).contains("1"); // attempts
            Browser.screenshot(browser, "03-dead");

            handlers.failing = false;
            click(By.cssSelector("#dead tr.dead-row button.requeue"));
            await().atMost(PATIENCE).until(() -> handlers.handled.contains(body));
            waitForCell("ops-failing", "dead", "0");
            waitUntil(d -> d.findElements(By.cssSelector("#dead tr.dead-row")).isEmpty());
            assertThat(browser.findElement(By.id("notice")).getText()).contains("Requeue: 1 message");
            Browser.screenshot(browser, "04-requeued");
            assertThat(log.warnings()).as("the one failure caused on purpose").hasSize(1);
        }
        finally {
            handlers.failing = true;
        }
        assertThat(((JavascriptExecutor) browser).executeScript("return window.__xss === undefined")).as(
                "a body, an id or a header is never run as HTML").isEqualTo(true);
    }

    @Test
    void aMessageIsFoundRescheduledAndCancelledByItsBody() {
        Instant due = Instant.now().plusSeconds(7200);
        for (int i = 0; i < 3; i++) {
            template.send(OutgoingMessage.fixedTime("ops-later", "{\"invoice\":" + i + "}", due.plusSeconds(i)));
        }
        open();
        waitForCell("ops-later", "waiting", "3");
        click(By.cssSelector("#topics tr[data-topic='ops-later'] td.name"));
        click(By.cssSelector("button[data-tab='find']"));
        // the tab shows after the address changes (hashchange comes after the click returns)
        type(By.id("find-body"), "{\"invoice\":2}");
        click(By.id("find"));
        waitUntil(d -> d.findElement(By.id("find-result")).getText().contains("yes, due"));
        Browser.screenshot(browser, "07-found");

        browser.findElement(By.id("when")).sendKeys("30m");
        click(By.id("reschedule"));
        waitUntil(d -> d.findElement(By.id("notice")).getText().contains("Reschedule: rescheduled"));
        click(By.cssSelector("button[data-tab='waiting']"));
        waitUntil(d -> {
            List<WebElement> rows = d.findElements(By.cssSelector("#waiting tr.waiting-row .body-text"));
            return rows.size() == 3 && rows.get(0).getText().equals("{\"invoice\":2}");
        });

        click(By.cssSelector("button[data-tab='find']"));
        click(By.id("cancel"));
        waitUntil(d -> d.findElement(By.id("notice")).getText().contains("Cancel: cancelled"));
        waitForCell("ops-later", "waiting", "2");
        assertThat(rmq.admin().find(MessageRef.body("ops-later", "{\"invoice\":2}")).exists()).isFalse();
    }

    @Test
    void aListenerPausedFromThePageStopsTakingMessagesAndResumes() {
        open();
        waitForListenerState("ops-worker", "running");
        click(By.cssSelector("#listeners tr[data-listener='ops-worker'] button.pause"));
        waitForListenerState("ops-worker", "paused");
        assertThat(rmq.admin().stats("ops-work").waiting()).isZero();

        template.send(OutgoingMessage.priority("ops-work", "sent-while-paused", 7));
        waitForCell("ops-work", "waiting", "1");
        await().pollDelay(Duration.ofSeconds(2)).atMost(PATIENCE).until(() -> true);
        assertThat(handlers.worked).as("a paused listener takes nothing").doesNotContain("sent-while-paused");
        waitForCell("ops-work", "waiting", "1"); // still: read through the wait, as the table is redrawn every 2 s
        Browser.screenshot(browser, "05-paused");

        click(By.cssSelector("#listeners tr[data-listener='ops-worker'] button.resume"));
        await().atMost(PATIENCE).until(() -> handlers.worked.contains("sent-while-paused"));
        waitForListenerState("ops-worker", "running");
        waitForCell("ops-work", "waiting", "0");
        Browser.screenshot(browser, "06-resumed");
    }
}
