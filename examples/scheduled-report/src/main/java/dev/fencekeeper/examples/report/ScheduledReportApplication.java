package dev.fencekeeper.examples.report;

import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * Run three of these against one fencekeeper cluster and one database: every instance schedules the
 * daily sales report, ShedLock on fencekeeper lets one generate it, and the JDBC fence refuses the
 * write of an instance that lost the lock while it was paused.
 */
@SpringBootApplication
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "PT10M")
@EnableConfigurationProperties(ReportProperties.class)
public class ScheduledReportApplication {
  public static void main(String[] args) {
    SpringApplication.run(ScheduledReportApplication.class, args);
  }
}
