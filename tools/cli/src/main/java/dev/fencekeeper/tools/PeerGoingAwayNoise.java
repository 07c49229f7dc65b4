package dev.fencekeeper.tools;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.ServerNotReadyException;
import org.slf4j.Marker;

/**
 * Drops the warnings and errors Ratis 3.3.0 logs when a node, or a peer it talks to, stops cleanly,
 * and nothing else: each rule below names one Ratis log statement and the exception that shows it
 * is about a stop. Ratis closes a server's divisions (and with them a leader's log appenders)
 * before its gRPC server and peer channels, and reports each step of that as a failure; no order of
 * fencekeeper's own steps avoids it. A real failure logs through the same statements with another
 * cause and is kept. (Installed by fencekeeper-logback-base.xml.)
 */
public final class PeerGoingAwayNoise extends TurboFilter {
  static final String LOG_APPENDER = "org.apache.ratis.grpc.server.GrpcLogAppender";
  static final String PROTOCOL_SERVICE = "org.apache.ratis.grpc.server.GrpcServerProtocolService";
  static final String DIVISION = "org.apache.ratis.server.RaftServer$Division";
  static final String GRPC_UTIL = "org.apache.ratis.grpc.GrpcUtil";

  /**
   * Ratis logs this only when it closes a channel to a peer (this node stops, or the peer left the
   * membership): the close waited 3 s for a call still open, and the channel is then shut down
   * forcibly (a channel that does not close even then is still warned of). The open call is a log
   * appender's stream that its interrupted thread never completed; fencekeeper's own stop line says
   * how long the Raft server took to close (docs/ratis-workarounds.md).
   */
  static final String GRACEFUL_CLOSE_TIMED_OUT =
      "Timed out gracefully shutting down connection: {}. ";

  /** How gRPC words a stream that one end closed: the peer went away, or this node stopped. */
  private static final String CANCELLED = "StatusRuntimeException: CANCELLED";

  @Override
  public FilterReply decide(
      Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
    if (format == null || level == null || !level.isGreaterOrEqual(Level.WARN)) {
      return FilterReply.NEUTRAL; // a level check (isWarnEnabled), or below what is dropped here
    }
    Throwable thrown = t != null ? t : lastThrowable(params);
    boolean drop =
        switch (logger.getName()) {
          case LOG_APPENDER ->
              // A leader stops an appender (it closes, steps down, or a member was removed) by
              // interrupting its thread.
              format.equals("{} is interrupted: {}")
                  // A closing leader's response handler reconnects through channels already closed.
                  || (format.equals("{}: Failed to resetClient for {}")
                      && thrown instanceof AlreadyClosedException)
                  // The follower closed the stream: it stops; "Follower failed" still follows.
                  || (format.contains(": Failed appendEntries") && format.contains(CANCELLED));
          case PROTOCOL_SERVICE ->
              // The leader's append stream was cancelled (the leader stops, or this node does), or
              // an append reached this node while it closes.
              (format.contains(" onError, lastRequest: ") && format.contains(CANCELLED))
                  || (format.contains(": Failed APPEND_ENTRIES request ") && closing(format));
          case DIVISION ->
              format.startsWith("{}: Failed appendEntries*")
                  && thrown instanceof ServerNotReadyException
                  && closing(thrown.getMessage());
          case GRPC_UTIL -> format.equals(GRACEFUL_CLOSE_TIMED_OUT);
          default -> false;
        };
    return drop ? FilterReply.DENY : FilterReply.NEUTRAL;
  }

  /** Whether Ratis said the server is closing or closed ({@code ServerNotReadyException}). */
  private static boolean closing(String message) {
    return message != null
        && (message.contains("current state is CLOSING")
            || message.contains("current state is CLOSED"));
  }

  private static Throwable lastThrowable(Object[] params) {
    if (params == null || params.length == 0) {
      return null;
    }
    return params[params.length - 1] instanceof Throwable last ? last : null;
  }
}
