package dev.fencekeeper.tools;

import ch.qos.logback.classic.ClassicConstants;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.jul.LevelChangePropagator;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import ch.qos.logback.core.spi.ScanException;
import ch.qos.logback.core.util.OptionHelper;

/**
 * Sets Logback up as fencekeeper-logback-base.xml does for a process that logs to stderr (every
 * client verb, and a node without {@code log.dir}), in code: Logback's XML configurator, its parser
 * and its model take about a tenth of a second of a client verb's start. Wherever the XML would do
 * anything else (a {@code -Dlogback.configurationFile}, a {@code logback-test.xml} on the class
 * path, a node's rolling file under {@code fencekeeper.log.dir}) it steps aside and Logback reads
 * the XML as before. StderrLoggingTest checks that both set up the same loggers, appender and
 * filters.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_NORMAL_PRIORITY)
public final class StderrLogging extends ContextAwareBase implements Configurator {
  /** The stderr appender's pattern, as in fencekeeper-logback-base.xml. */
  static final String PATTERN = "%d{HH:mm:ss.SSS} %-5level %logger{36} [%thread] %msg%n";

  @Override
  public ExecutionStatus configure(LoggerContext logback) {
    if (!appliesTo(logback)) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    apply(logback);
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  /** Whether the XML Logback would read is fencekeeper's, and would log to stderr. */
  static boolean appliesTo(LoggerContext logback) {
    return appliesTo(
        logback,
        StderrLogging.class.getClassLoader().getResource(ClassicConstants.TEST_AUTOCONFIG_FILE)
            != null);
  }

  /** As {@link #appliesTo(LoggerContext)}, told whether a logback-test.xml is on the class path. */
  static boolean appliesTo(LoggerContext logback, boolean testConfiguration) {
    return !testConfiguration
        && OptionHelper.getSystemProperty(ClassicConstants.CONFIG_FILE_PROPERTY) == null
        && OptionHelper.propertyLookup(ServerCommand.LOG_DIR_PROPERTY, logback, null) == null;
  }

  /** The stderr branch of fencekeeper-logback-base.xml, element by element. */
  static void apply(LoggerContext logback) {
    // First, as in the XML, so that every level set below reaches java.util.logging too.
    LevelChangePropagator propagator = new LevelChangePropagator();
    propagator.setContext(logback);
    propagator.setResetJUL(true);
    logback.addListener(propagator);
    propagator.start();

    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(logback);
    encoder.setPattern(PATTERN);
    encoder.start();
    ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
    stderr.setContext(logback);
    stderr.setName("STDERR");
    stderr.setTarget("System.err");
    stderr.setEncoder(encoder);
    stderr.start();
    Logger root = logback.getLogger(Logger.ROOT_LOGGER_NAME);
    root.addAppender(stderr);

    setLevel(logback, "dev.fencekeeper.rejections", "${fencekeeper.rejections.log.level:-INFO}");

    PeerGoingAwayNoise noise = new PeerGoingAwayNoise();
    noise.setContext(logback);
    noise.start();
    logback.addTurboFilter(noise);

    logback.getLogger("org.apache.ratis").setLevel(Level.WARN);
    logback.getLogger("org.apache.ratis.client.impl.OrderedAsync").setLevel(Level.OFF);
    logback.getLogger("org.apache.zookeeper").setLevel(Level.ERROR);
    setLevel(logback, Logger.ROOT_LOGGER_NAME, "${" + ServerCommand.LOG_LEVEL_PROPERTY + ":-WARN}");
  }

  /** A level the XML takes from a property: the same lookup, the same reading of its value. */
  private static void setLevel(LoggerContext logback, String name, String expression) {
    String value;
    try {
      value = OptionHelper.substVars(expression, logback);
    } catch (ScanException e) {
      value = expression;
    }
    Logger logger = logback.getLogger(name);
    if (!Logger.ROOT_LOGGER_NAME.equals(name)
        && ("INHERITED".equalsIgnoreCase(value) || "NULL".equalsIgnoreCase(value))) {
      logger.setLevel(null);
    } else {
      logger.setLevel(Level.toLevel(value));
    }
  }
}
