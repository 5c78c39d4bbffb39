package io.rmq.spring.dashboard;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.logging.Level;
import java.util.logging.Logger;

import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

import static org.assertj.core.api.Assertions.fail;

/**
 * Debian's headless Chromium through its chromedriver, for browser tests. Both paths are given to Selenium, so its
 * Selenium Manager (which would download a browser or driver) is never asked. Without them the test is skipped with
 * the reason, unless {@code RMQ_REQUIRE_BROWSER=1} (CI installs them and sets it): then it fails.
 */
final class Browser {

    static final String CHROMIUM = "/usr/bin/chromium";
    static final String CHROMEDRIVER = "/usr/bin/chromedriver";
    static final Path SCREENSHOTS = Path.of("target", "dashboard-screenshots");

    /** Selenium logs through java.util.logging; its CDP-version notice is not the test's business. Kept referenced. */
    private static final Logger SELENIUM_LOG = Logger.getLogger("org.openqa.selenium");

    private Browser() {
    }

    static WebDriver start() {
        boolean present = new File(CHROMIUM).canExecute() && new File(CHROMEDRIVER).canExecute();
        if (!present) {
            String reason = "Browser test needs Debian's chromium and chromium-driver (" + CHROMIUM + ", " + CHROMEDRIVER
                    + "): apt-get install chromium chromium-driver";
            if ("1".equals(System.getenv("RMQ_REQUIRE_BROWSER"))) {
                fail(reason + " (RMQ_REQUIRE_BROWSER=1)");
            }
            Assumptions.abort(reason + "; skipped");
        }
        SELENIUM_LOG.setLevel(Level.SEVERE);
        System.setProperty(ChromeDriverService.CHROME_DRIVER_EXE_PROPERTY, CHROMEDRIVER);
        ChromeOptions options = new ChromeOptions().setBinary(CHROMIUM).addArguments("--headless=new", "--no-sandbox",
                "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1440,1500", "--hide-scrollbars",
                "--force-device-scale-factor=1", "--lang=en-US");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(CHROMEDRIVER))
                .usingAnyFreePort().withLogOutput(java.io.OutputStream.nullOutputStream()).build();
        ChromeDriver driver = new ChromeDriver(service, options);
        driver.manage().timeouts().scriptTimeout(Duration.ofSeconds(30));
        return driver;
    }

    /** Saves the page as {@code target/dashboard-screenshots/<name>.png}. */
    static Path screenshot(WebDriver driver, String name) {
        try {
            Files.createDirectories(SCREENSHOTS);
            Path to = SCREENSHOTS.resolve(name + ".png");
            File shot = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE);
            Files.copy(shot.toPath(), to, StandardCopyOption.REPLACE_EXISTING);
            return to;
        }
        catch (IOException ex) {
            throw new IllegalStateException("Cannot save screenshot " + name, ex);
        }
    }
}
