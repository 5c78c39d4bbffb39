package io.rmq.spring.dashboard;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.ConsumeMode;
import io.rmq.producer.OutgoingMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.interactions.Actions;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What the operator sees is true now or says how old it is, in headless Chromium at 1,280 pixels: every message in
 * flight names the instance that holds it (in a handler or prefetched) with the age of that instance's report, a
 * message sent without an id is still told apart, an instance's figures say when it reported them, 128 owned slots
 * read as ranges, an unknown topic's address says so, and ids and errors wrap between their parts. Screenshots go
 * to {@code target/dashboard-screenshots/4*.png}.
 */
@TestPropertySource(properties = {"rmq.instances.heartbeat=1s", "rmq.topics.truth-held.type=FIXED_TIME",
        "rmq.topics.truth-held.slot-amount=2", "rmq.topics.truth-wide.type=FIXED_TIME",
        "rmq.topics.truth-wide.slot-amount=128"})
class DashboardTruthBrowserTest extends BrowserTestSupport {

    private static final String PREFIX = "truth-" + UUID.randomUUID();

    private final List<ListenerContainer> containers = new ArrayList<>();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        useRedis(registry, PREFIX);
    }

    @Override
    Optional<Dimension> windowSize() {
        return Optional.of(new Dimension(1280, 1400));
    }

    @AfterEach
    void stopContainers() {
        containers.forEach(ListenerContainer::stop);
    }

    private void load(String fragment) {
        browser.get("about:blank");
        browser.get(url(fragment));
        new Actions(browser).moveToLocation(1, 1).perform();
    }

    private ListenerContainer start(String topic, String id, ConsumeMode mode, MessageHandler<String> handler) {
        ListenerContainer container = rmq.container(topic, ConsumerSettings.DEFAULT, String.class, handler,
                new ContainerOptions(id, 1, Duration.ofMillis(200), Duration.ofSeconds(5), null).withMode(mode));
        containers.add(container);
        container.start();
        return container;
    }

    @Test
    void everyMessageInFlightNamesItsHolderAndHowOldThatReportIs() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        start("truth-held", "truth-holder", ConsumeMode.CONCURRENT, (String body, Delivery d) -> {
            started.countDown();
            release.await(60, TimeUnit.SECONDS);
        });
        try {
            Instant due = Instant.now().minusSeconds(1);
            template.send(OutgoingMessage.fixedTime("truth-held", "first", due.minusMillis(10)));
            assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
            template.send(OutgoingMessage.fixedTime("truth-held", "second-body", due).withId("order-2026-11-29-0002"));
            template.send(OutgoingMessage.fixedTime("truth-held", "third-body", due).withId("order-2026-11-29-0003"));
            template.send(OutgoingMessage.fixedTime("truth-held", "a body sent without an id", due));
            await().atMost(PATIENCE).until(() -> rmq.admin().stats("truth-held").inFlight() == 4);
            String me = rmq.instances().id();
            // its next report (1 s) lists what it fetched; the tab reads on opening (and on Refresh), not every 2 s
            await().atMost(PATIENCE).until(() -> rmq.instances().list().stream().filter(i -> i.id().equals(me))
                    .anyMatch(i -> i.handling().size() + i.prefetched().size() == 4));

            load("#/topics/truth-held/in-flight");
            waitUntil(d -> {
                List<WebElement> rows = d.findElements(By.cssSelector("#in-flight tr.in-flight-row"));
                return rows.size() == 4 && rows.stream().allMatch(r -> r.findElement(By.cssSelector("td.instance"))
                        .getText().startsWith(me));
            });
            List<WebElement> rows = browser.findElements(By.cssSelector("#in-flight tr.in-flight-row"));
            List<String> held = rows.stream().map(r -> r.findElement(By.cssSelector("td.instance .held-as")).getText())
                    .toList();
            assertThat(held).allMatch(text -> text.matches(
                    "(in a handler|prefetched), reported (just now|\\d+ s ago)"));
            assertThat(held.stream().filter(text -> text.startsWith("in a handler"))).hasSize(1);
            assertThat(held.stream().filter(text -> text.startsWith("prefetched"))).hasSize(3);
            for (WebElement row : rows) {
                String since = row.findElements(By.cssSelector("td.time")).get(0).getText();
                if (row.findElement(By.cssSelector("td.instance")).getText().contains("prefetched")) {
                    assertThat(since).isEqualTo("waiting for a handler");
                }
                else {
                    assertThat(since).contains("Z");
                }
            }
            // a message sent without an id, bodies hidden: still told apart, by what it is and its size
            WebElement nameless = rows.stream().filter(r -> r.findElement(By.cssSelector("td.id")).getText()
                    .equals("no id")).filter(r -> r.findElement(By.cssSelector("td.body")).getText()
                    .matches("hidden, \\d+ B")).findFirst().orElseThrow();
            assertThat(nameless.findElement(By.cssSelector("td.instance")).getText()).startsWith(me);
            assertThat(browser.findElement(By.cssSelector("#in-flight")).getText()).doesNotContain("unknown");
            Browser.screenshot(browser, "40-in-flight-held-and-prefetched");

            // the instance's page: its figures as of its report, and the same four messages
            load("#/instances/" + me);
            waitUntil(d -> d.findElements(By.cssSelector("#instance-in-flight tr.in-flight-row")).size() == 4);
            String asOf = browser.findElement(By.id("instance-as-of")).getText();
            assertThat(asOf).matches("As this instance reported (just now|\\d+ s ago) \\(.*\\): .*");
            assertThat(fact("Reported")).matches("just now|\\d+ s ago");
            assertThat(fact("Prefetched")).isEqualTo("3");
            assertThat(browser.findElement(By.id("instance-in-flight-as-of")).getText())
                    .startsWith("What it reported holding");
            assertThat(browser.findElements(By.cssSelector("#instance-in-flight td.held-as"))).extracting(
                    WebElement::getText).containsExactlyInAnyOrder("in a handler", "prefetched", "prefetched",
                    "prefetched");
            Browser.screenshot(browser, "41-instance-as-of-its-report");

            // the overview: each instance's report age
            load("#/");
            WebElement age = waitUntil(d -> d.findElement(By.cssSelector("#instances tr[data-instance='" + me
                    + "'] td.report-age")));
            assertThat(age.getText()).matches("just now|\\d+ s ago");
        }
        finally {
            release.countDown();
        }
    }

    @Test
    void manyOwnedSlotsReadAsRangesAndAnUnknownTopicSaysSo() {
        start("truth-wide", "truth-wide-orderly", ConsumeMode.ORDERLY, (String body, Delivery d) -> { });
        await().atMost(PATIENCE).until(() -> containers.get(0).ownedSlots().size() == 128);
        String me = rmq.instances().id();
        load("#/instances/" + me);
        waitUntil(d -> d.findElement(By.xpath("//div[@id='instance-slots']/p[a[text()='truth-wide']]")).getText()
                .equals("truth-wide: 128 slots: 0–127"));
        // read in one script: the page is redrawn every 2 s, so an element found earlier may be gone
        List<?> drawn = (List<?>) js("const p = [...document.querySelectorAll('#instance-slots p')].find("
                + "p => p.querySelector('a').textContent === 'truth-wide'); return [p.querySelectorAll('.slot-chip')"
                + ".length, p.querySelector('.slot-ranges').getAttribute('title')];");
        assertThat(((Number) drawn.get(0)).intValue()).as("not one chip per slot").isZero();
        assertThat((String) drawn.get(1)).startsWith("owned: 0, 1, 2, ").endsWith(", 126, 127");
        // the ranges of other sets, as the page writes them
        assertThat(js("return slotRanges(Array.from({length: 64}, (_, i) => 2 * i))")).isEqualTo("0–126 (even)");
        assertThat(js("return slotRanges([1, 5, 9, 10, 11, 12])")).isEqualTo("1, 5, 9–12");
        assertThat(js("return slotRanges(Array.from({length: 40}, (_, i) => 3 * i))")).isNull();
        Browser.screenshot(browser, "42-instance-128-owned-slots");

        load("#/topics/nope");
        waitUntil(d -> d.findElement(By.id("topic-unknown")).isDisplayed());
        assertThat(browser.findElement(By.id("topic-unknown")).getText()).startsWith("No topic nope");
        assertThat(browser.findElement(By.id("topic-messages")).isDisplayed()).isFalse();
        assertThat(browser.findElement(By.id("history-card")).isDisplayed()).isFalse();
        assertThat(browser.findElement(By.id("updated")).getText()).startsWith("updated");
        await().pollDelay(Duration.ofSeconds(2)).atMost(PATIENCE).until(() -> true); // the tab's answer has come
        assertThat(browser.findElement(By.id("notice")).isDisplayed()).as("no error notice beside it").isFalse();
        Browser.screenshot(browser, "43-no-topic");
    }

    @Test
    void idsAndErrorsWrapBetweenTheirPartsNeverInsideOne() {
        String id = "order-2026-11-29.customer-4711.payment-capture.gateway-timeout.retry-0001";
        String body = "payment.capture.GatewayTimeoutException:customer-4711/order-2026-11-29/attempt-0001";
        template.send(OutgoingMessage.fixedTime("ops-failing", body, Instant.now()).withId(id));
        await().atMost(PATIENCE).until(() -> rmq.admin().stats("ops-failing").dead() >= 1);
        load("#/topics/ops-failing");
        waitUntil(d -> d.findElement(By.cssSelector("#dead")).getText().contains("order-2026-11-29"));
        // each part between two break opportunities (each word of it, each piece up to a hyphen) lies on one line
        String script = """
                const broken = [];
                for (const code of document.querySelectorAll('#dead td.id code, #dead td.error code')) {
                  for (const node of code.childNodes) {
                    if (node.nodeType !== Node.TEXT_NODE) continue;
                    const re = /[^\\s-]+-?/g; // a word, or its part up to a hyphen (browsers break after one)
                    let m;
                    while ((m = re.exec(node.data)) !== null) {
                      const range = document.createRange();
                      range.setStart(node, m.index);
                      range.setEnd(node, m.index + m[0].length);
                      const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
                      if (lines.size > 1) broken.push(m[0]);
                    }
                  }
                }
                return broken;""";
        assertThat((List<?>) js(script)).as("parts broken across lines").isEmpty();
        WebElement idCode = browser.findElement(By.xpath("//table[@id='dead']//td[contains(@class,'id')]//code[contains(.,"
                + "'order-2026-11-29')]"));
        assertThat(idCode.getText().replace("\n", "")).isEqualTo(id);
        assertThat(((Number) js("return arguments[0].getClientRects().length", idCode)).intValue())
                .as("the id wraps (between its parts) in its column").isGreaterThan(1);
        Browser.screenshot(browser, "44-dead-long-id-and-error");
    }

    /** The value beside a name in the instance's facts. */
    private String fact(String name) {
        return browser.findElement(By.xpath("//dl[@id='instance-facts']//dt[text()='" + name
                + "']/following-sibling::dd")).getText();
    }
}
