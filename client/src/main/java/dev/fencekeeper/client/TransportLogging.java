package dev.fencekeeper.client;

import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes what the client's transport (Ratis's shaded gRPC) logs through {@code java.util.logging}
 * to SLF4J, under the same logger names, so the application's SLF4J configuration decides what
 * appears (the transport's INFO lines, such as TcpMetrics' "Epoll available" at its first channel,
 * otherwise reach stderr past it). Only the shaded gRPC namespace is taken over; the JVM's other
 * {@code java.util.logging} configuration is left alone.
 */
final class TransportLogging {
  /** The JUL namespace of the gRPC copy the client uses. */
  static final String NAMESPACE = "org.apache.ratis.thirdparty.io.grpc";

  // Held strongly: java.util.logging keeps only weak references to loggers, and a logger collected
  // and re-created would lose the handler and the level set here.
  private static final java.util.logging.Logger TAKEN =
      java.util.logging.Logger.getLogger(NAMESPACE);

  static {
    Logger slf4j = LoggerFactory.getLogger(NAMESPACE);
    // gRPC asks isLoggable before it builds a record: publish no more than SLF4J would print.
    TAKEN.setLevel(
        slf4j.isTraceEnabled()
            ? Level.FINEST
            : slf4j.isDebugEnabled()
                ? Level.FINE
                : slf4j.isInfoEnabled()
                    ? Level.INFO
                    : slf4j.isWarnEnabled() ? Level.WARNING : Level.SEVERE);
    TAKEN.setUseParentHandlers(false);
    TAKEN.addHandler(new ToSlf4j());
  }

  private TransportLogging() {}

  /** Takes the namespace over, once per class loader; calls after the first do nothing. */
  static void install() {
    // The static initializer did it.
  }

  /** Hands each record to the SLF4J logger of the same name, at the matching level. */
  static final class ToSlf4j extends Handler {
    private final Formatter formatter = new SimpleFormatter();

    @Override
    public void publish(LogRecord record) {
      if (record == null) {
        return;
      }
      String name = record.getLoggerName() == null ? NAMESPACE : record.getLoggerName();
      Logger to = LoggerFactory.getLogger(name);
      String message = formatter.formatMessage(record);
      Throwable thrown = record.getThrown();
      int level = record.getLevel().intValue();
      if (level >= Level.SEVERE.intValue()) {
        to.error(message, thrown);
      } else if (level >= Level.WARNING.intValue()) {
        to.warn(message, thrown);
      } else if (level >= Level.INFO.intValue()) {
        to.info(message, thrown);
      } else if (level >= Level.FINE.intValue()) {
        to.debug(message, thrown);
      } else {
        to.trace(message, thrown);
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }
}
