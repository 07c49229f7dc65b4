package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The stop-noise filter drops the Ratis statements it names, and only those. */
class PeerGoingAwayNoiseTest {
  private final LoggerContext context = new LoggerContext();
  private final ListAppender<ILoggingEvent> kept = new ListAppender<>();

  @BeforeEach
  void install() {
    PeerGoingAwayNoise filter = new PeerGoingAwayNoise();
    filter.setContext(context);
    filter.start();
    context.addTurboFilter(filter);
    kept.setContext(context);
    kept.start();
    context.getLogger(Logger.ROOT_LOGGER_NAME).addAppender(kept);
  }

  // Guarantee: closing a peer channel whose graceful close timed out (a log appender's stream left
  // open by its interrupted thread) is not a warning of a clean stop; the forced close failing
  // too, or the same words from another logger, are kept.
  @Test
  void aGracefulChannelCloseThatTimedOutIsDroppedAndNothingElse() {
    String channel = "ManagedChannelOrphanWrapper{delegate=ManagedChannelImpl{target=127.0.0.1:1}}";
    Logger grpcUtil = context.getLogger(PeerGoingAwayNoise.GRPC_UTIL);
    grpcUtil.warn(PeerGoingAwayNoise.GRACEFUL_CLOSE_TIMED_OUT, channel);
    grpcUtil.warn("Timed out forcefully shutting down connection: {}. ", channel);
    context
        .getLogger("dev.fencekeeper.Other")
        .warn(PeerGoingAwayNoise.GRACEFUL_CLOSE_TIMED_OUT, channel);

    assertThat(kept.list)
        .extracting(e -> e.getLoggerName() + " " + e.getLevel() + " " + e.getFormattedMessage())
        .containsExactly(
            PeerGoingAwayNoise.GRPC_UTIL
                + " WARN Timed out forcefully shutting down connection: "
                + channel
                + ". ",
            "dev.fencekeeper.Other WARN Timed out gracefully shutting down connection: "
                + channel
                + ". ");
    assertThat(grpcUtil.isEnabledFor(Level.WARN)).isTrue();
  }
}
