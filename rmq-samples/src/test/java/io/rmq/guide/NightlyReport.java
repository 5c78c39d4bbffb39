package io.rmq.guide;

// docs/scheduling.md's example, imports included: a nightly job that runs on one instance per night; compiled so it
// cannot rot
// tag::scheduling-method[]
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;

import io.rmq.spring.annotation.RmqScheduled;
import org.springframework.stereotype.Component;

@Component
class NightlyReport {

    private static final ZoneId PARIS = ZoneId.of("Europe/Paris");

    private final ReportService reports;

    NightlyReport(ReportService reports) {
        this.reports = reports;
    }

    /** At 02:00 Paris time, on whichever instance takes the firing; the firing time tells which day to report. */
    @RmqScheduled(name = "nightly-report", cron = "0 0 2 * * *", zone = "Europe/Paris", misfire = "fire-once")
    void run(Instant firing) {
        LocalDate yesterday = firing.atZone(PARIS).toLocalDate().minusDays(1);
        reports.build(yesterday);
    }
}

/** The application's own work: whatever builds one day's report (a bean of the application implements it). */
interface ReportService {

    void build(LocalDate day);
}
// end::scheduling-method[]
