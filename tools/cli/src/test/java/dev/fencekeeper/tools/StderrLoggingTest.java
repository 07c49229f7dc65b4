package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.joran.spi.JoranException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class StderrLoggingTest {
  @AfterEach
  void clearProperties() {
    System.clearProperty(ServerCommand.LOG_LEVEL_PROPERTY);
    System.clearProperty("fencekeeper.rejections.log.level");
    System.clearProperty(ServerCommand.LOG_DIR_PROPERTY);
    System.clearProperty("logback.configurationFile");
  }

  // Guarantee: a client verb's logging set up in code is what logback.xml sets up for stderr: the
  // same loggers at the same levels, the same appender, pattern and filters.
  @Test
  void codeSetsUpWhatTheXmlDoes() throws JoranException {
    assertThat(describe(fromCode())).isEqualTo(describe(fromXml()));
  }

  // Guarantee: both read -Dfencekeeper.log.level and -Dfencekeeper.rejections.log.level alike.
  @Test
  void levelPropertiesReadAlike() throws JoranException {
    System.setProperty(ServerCommand.LOG_LEVEL_PROPERTY, "DEBUG");
    System.setProperty("fencekeeper.rejections.log.level", "OFF");
    List<String> fromXml = describe(fromXml());
    assertThat(fromXml).contains("level ROOT=DEBUG", "level dev.fencekeeper.rejections=OFF");
    assertThat(describe(fromCode())).isEqualTo(fromXml);
  }

  // Guarantee: the code sets logging up only where the XML would log to stderr; a node's log
  // directory (a system property, as `server` sets it, or a context property), a configuration
  // file of the user's and a logback-test.xml leave it to Logback's XML configurator.
  @Test
  void stepsAsideWhereTheXmlWouldDoSomethingElse() {
    assertThat(StderrLogging.appliesTo(new LoggerContext(), false)).isTrue();
    assertThat(StderrLogging.appliesTo(new LoggerContext(), true)).isFalse();

    LoggerContext withLogDir = new LoggerContext();
    withLogDir.putProperty(ServerCommand.LOG_DIR_PROPERTY, "/tmp/logs");
    assertThat(StderrLogging.appliesTo(withLogDir, false)).isFalse();

    System.setProperty(ServerCommand.LOG_DIR_PROPERTY, "/tmp/logs");
    assertThat(StderrLogging.appliesTo(new LoggerContext(), false)).isFalse();
    System.clearProperty(ServerCommand.LOG_DIR_PROPERTY);

    System.setProperty("logback.configurationFile", "/tmp/mine.xml");
    assertThat(StderrLogging.appliesTo(new LoggerContext(), false)).isFalse();
  }

  private static LoggerContext fromXml() throws JoranException {
    LoggerContext logback = new LoggerContext();
    JoranConfigurator xml = new JoranConfigurator();
    xml.setContext(logback);
    xml.doConfigure(StderrLoggingTest.class.getResource("/logback.xml"));
    return logback;
  }

  private static LoggerContext fromCode() {
    LoggerContext logback = new LoggerContext();
    StderrLogging.apply(logback);
    return logback;
  }

  private static List<String> describe(LoggerContext logback) {
    List<String> facts = new ArrayList<>();
    Map<String, String> levels = new TreeMap<>();
    for (Logger logger : logback.getLoggerList()) {
      if (logger.getLevel() != null) {
        levels.put(logger.getName(), logger.getLevel().toString());
      }
      for (Iterator<Appender<ILoggingEvent>> it = logger.iteratorForAppenders(); it.hasNext(); ) {
        Appender<ILoggingEvent> appender = it.next();
        String target = "";
        String pattern = "";
        if (appender instanceof ConsoleAppender<ILoggingEvent> console) {
          target = console.getTarget();
          if (console.getEncoder() instanceof PatternLayoutEncoder encoder) {
            pattern = encoder.getPattern();
          }
        }
        facts.add(
            "appender "
                + logger.getName()
                + " "
                + appender.getName()
                + " "
                + appender.getClass().getName()
                + " "
                + target
                + " "
                + pattern
                + " started="
                + appender.isStarted());
      }
    }
    levels.forEach((name, level) -> facts.add("level " + name + "=" + level));
    logback.getTurboFilterList().forEach(f -> facts.add("turbo " + f.getClass().getName()));
    logback.getCopyOfListenerList().forEach(l -> facts.add("listener " + l.getClass().getName()));
    return facts;
  }
}
