package dev.fencekeeper.examples.report;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code report.*}: who this instance is, and how long computing the totals takes (a stand-in for
 * the slow query of a real report; the window in which a pause does the damage).
 *
 * @param instance the name this instance signs its report with
 * @param computeTime how long computing the totals takes
 */
@ConfigurationProperties("report")
public record ReportProperties(String instance, Duration computeTime) {
  public ReportProperties {
    instance = instance == null ? "report-" + ProcessHandle.current().pid() : instance;
    computeTime = computeTime == null ? Duration.ZERO : computeTime;
  }
}
