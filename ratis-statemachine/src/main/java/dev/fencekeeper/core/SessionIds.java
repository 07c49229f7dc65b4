package dev.fencekeeper.core;

import java.util.regex.Pattern;

/** The syntax of a session id, checked alike by the core and by a node opening a session. */
public final class SessionIds {
  private static final Pattern SESSION_ID = Pattern.compile("[A-Za-z0-9_-]{16,64}");

  private SessionIds() {}

  /** Null when {@code sessionId} is 16 to 64 characters of [A-Za-z0-9_-], else why not. */
  public static String problem(String sessionId) {
    return sessionId != null && SESSION_ID.matcher(sessionId).matches()
        ? null
        : "sessionId: must be 16 to 64 characters of [A-Za-z0-9_-] ("
            + (sessionId == null ? 0 : sessionId.length())
            + " characters given)";
  }
}
