package dev.fencekeeper.client;

import java.net.ConnectException;
import java.net.UnknownHostException;
import java.nio.channels.UnresolvedAddressException;
import java.time.Duration;

/**
 * Whether any node of the cluster can be reached at all, judged from the outcome of every attempt
 * the client makes. A connection refused or a host that does not resolve is a refusal; anything
 * else (an answer, a node saying it is not the leader or not ready, a timeout) counts as contact,
 * so an election, where nodes answer but none leads yet, never looks unreachable.
 */
final class Reachability {
  private volatile long lastContactNanos;
  private volatile long lastRefusalNanos;
  private volatile String lastRefusal = "";

  Reachability() {
    // Nothing has refused yet: a refusal is needed before anything looks unreachable.
    long now = System.nanoTime();
    lastContactNanos = now;
    lastRefusalNanos = now - 1;
  }

  /** Records the outcome of one failed attempt. */
  void attemptFailed(Throwable cause) {
    String refusal = connectFailure(cause);
    if (refusal != null) {
      lastRefusal = refusal;
      lastRefusalNanos = System.nanoTime();
    } else {
      contact();
    }
  }

  /** Records an attempt the node refused for {@code why}, as a connection refused is. */
  void refused(String why) {
    lastRefusal = why;
    lastRefusalNanos = System.nanoTime();
  }

  void contact() {
    lastContactNanos = System.nanoTime();
  }

  /**
   * True when, over at least {@code bound} up to now and since {@code sinceNanos}, no node was
   * contacted and at least one attempt was refused.
   */
  boolean unreachable(long sinceNanos, Duration bound) {
    long contact = lastContactNanos;
    long from = sinceNanos - contact > 0 ? sinceNanos : contact;
    return System.nanoTime() - from >= bound.toNanos() && lastRefusalNanos - from > 0;
  }

  /** The latest refusal, for the one-line message. */
  String lastRefusal() {
    return lastRefusal;
  }

  /** A short description when {@code error} is a failure to connect at all, else null. */
  static String connectFailure(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof ConnectException) {
        return "connection refused";
      }
      if (t instanceof UnknownHostException || t instanceof UnresolvedAddressException) {
        return "unknown host";
      }
      String message = t.getMessage();
      if (message != null) {
        if (message.contains("Connection refused")) {
          return "connection refused";
        }
        if (message.contains("Unable to resolve host")
            || message.contains("UnresolvedAddressException")) {
          return "unknown host";
        }
      }
    }
    return null;
  }
}
