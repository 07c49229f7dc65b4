package dev.fencekeeper.core;

import dev.fencekeeper.config.Limits;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

/**
 * Checks every command and query against the configured limits before anything is touched, so that
 * a rejected request is answered {@code INVALID_ARGUMENT} with a message and changes nothing. Run
 * in apply, on every replica: the log is input too.
 */
final class Validation {
  private final Limits limits;

  Validation(Limits limits) {
    this.limits = limits;
  }

  /** Returns null when the command is well-formed, else the message for INVALID_ARGUMENT. */
  String check(Command command) {
    if (command instanceof Command.Acquire a) {
      return first(
          resource(a.resource()),
          text("owner", a.owner(), 0, limits.maxOwnerBytes()),
          ttl("ttl", a.ttlMs(), false),
          text("requestId", a.requestId(), a.waitMs() > 0 ? 1 : 0, limits.maxRequestIdBytes()),
          within("wait", a.waitMs()),
          within("lockDelay", a.lockDelayMs()),
          a.sessionId().isEmpty() ? null : sessionId(a.sessionId()));
    }
    if (command instanceof Command.RenewSession r) {
      return first(
          sessionId(r.sessionId()),
          r.exceptTokens().size() > MAX_EXCEPT_TOKENS
              ? "exceptTokens: "
                  + r.exceptTokens().size()
                  + " tokens exceed the limit of "
                  + MAX_EXCEPT_TOKENS
              : null);
    }
    if (command instanceof Command.CancelWait c) {
      return first(
          resource(c.resource()), text("requestId", c.requestId(), 1, limits.maxRequestIdBytes()));
    }
    if (command instanceof Command.Revoke r) {
      return first(resource(r.resource()), text("reason", r.reason(), 0, limits.maxOwnerBytes()));
    }
    if (command instanceof Command.Renew r) {
      return first(resource(r.resource()), token(r.token()), ttl("ttl", r.ttlMs(), true));
    }
    if (command instanceof Command.Release r) {
      return first(resource(r.resource()), token(r.token()));
    }
    if (command instanceof Command.Write w) {
      return first(
          resource(w.resource()),
          token(w.token()),
          text("requestId", w.requestId(), 0, limits.maxRequestIdBytes()),
          writes(w));
    }
    if (command instanceof Command.Batch b) {
      return batch(b);
    }
    return null; // Takeover and Tick carry no input
  }

  /**
   * The batch as a whole; each command in it is checked on its own when applied, so one bad command
   * is answered INVALID_ARGUMENT without failing the others.
   */
  private String batch(Command.Batch b) {
    int size = b.commands().size();
    if (size == 0) {
      return "batch: at least one request is required";
    }
    if (size > limits.maxRequestsPerBatch()) {
      return "batch: " + size + " requests exceed the limit of " + limits.maxRequestsPerBatch();
    }
    long totalValueBytes = 0;
    for (int i = 0; i < size; i++) {
      Command c = b.commands().get(i);
      if (!Command.Batch.isBatchable(c)) {
        return "batch: request "
            + (i + 1)
            + " is a "
            + c.getClass().getSimpleName().toLowerCase()
            + "; only acquire, renew, release, write, cancel-wait and renew-session may be"
            + " batched";
      }
      if (c instanceof Command.Write w) {
        for (Command.KeyWrite kw : w.writes()) {
          totalValueBytes += kw.value().length;
        }
      }
    }
    // A batch is one log entry, bounded like one write (see writes()).
    if (totalValueBytes > limits.maxValueBytes()) {
      return "batch: "
          + totalValueBytes
          + " value bytes in one batch exceed the limit of "
          + limits.maxValueBytes();
    }
    return null;
  }

  /** Tokens one session renewal may leave out. */
  static final int MAX_EXCEPT_TOKENS = 10_000;

  /** A session id: 16 to 64 characters of [A-Za-z0-9_-]. */
  static String sessionId(String sessionId) {
    return SessionIds.problem(sessionId);
  }

  String resource(String resource) {
    return text("resource", resource, 1, limits.maxResourceBytes());
  }

  String key(String key) {
    return text("key", key, 1, limits.maxKeyBytes());
  }

  String token(long token) {
    return token <= 0 ? "token: must be a positive token, got " + token : null;
  }

  private String ttl(String field, long ttlMs, boolean zeroMeansKeep) {
    if (zeroMeansKeep && ttlMs == 0) {
      return null;
    }
    long min = limits.minTtl().toMillis();
    long max = limits.maxTtl().toMillis();
    if (ttlMs < min || ttlMs > max) {
      return field
          + ": "
          + ttlMs
          + "ms is outside the configured bounds ["
          + min
          + "ms, "
          + max
          + "ms]";
    }
    return null;
  }

  /** Waits and lock-delays are bounded like TTLs: never negative, never past the longest lease. */
  private String within(String field, long ms) {
    long max = limits.maxTtl().toMillis();
    if (ms < 0 || ms > max) {
      return field + ": " + ms + "ms is outside [0ms, " + max + "ms]";
    }
    return null;
  }

  private String writes(Command.Write w) {
    if (w.writes().isEmpty()) {
      return "writes: at least one key is required";
    }
    if (w.writes().size() > limits.maxKeysPerWrite()) {
      return "writes: "
          + w.writes().size()
          + " keys exceed the limit of "
          + limits.maxKeysPerWrite();
    }
    Set<String> seen = new HashSet<>();
    long totalValueBytes = 0;
    for (Command.KeyWrite kw : w.writes()) {
      String bad = key(kw.key());
      if (bad != null) {
        return bad;
      }
      if (!seen.add(kw.key())) {
        return "key: '" + kw.key() + "' appears twice in one write";
      }
      if (kw.delete() && kw.value().length > 0) {
        return "value: a delete of '" + kw.key() + "' must not carry a value";
      }
      if (kw.value().length > limits.maxValueBytes()) {
        return "value: "
            + kw.value().length
            + " bytes for key '"
            + kw.key()
            + "' exceed the limit of "
            + limits.maxValueBytes();
      }
      totalValueBytes += kw.value().length;
    }
    // One write is one log entry; bounding its total keeps every entry well inside what Ratis
    // replicates in one append (its appender buffer is 4 MB), whatever the keys-per-write limit.
    if (totalValueBytes > limits.maxValueBytes()) {
      return "value: "
          + totalValueBytes
          + " bytes in one write exceed the limit of "
          + limits.maxValueBytes();
    }
    return null;
  }

  /**
   * Length in UTF-8 bytes within [minBytes, maxBytes], no control characters and no format
   * characters (Unicode category Cf: bidi overrides and isolates, zero-width characters, the
   * byte-order mark), which change how a name is shown without being shown themselves.
   */
  static String textWithin(String field, String value, int minBytes, int maxBytes) {
    if (value == null) {
      return field + ": missing";
    }
    int bytes = value.getBytes(StandardCharsets.UTF_8).length;
    if (bytes < minBytes) {
      return field + ": must not be empty";
    }
    if (bytes > maxBytes) {
      return field + ": " + bytes + " bytes exceed the limit of " + maxBytes;
    }
    for (int i = 0; i < value.length(); ) {
      int cp = value.codePointAt(i);
      if (Character.isISOControl(cp)) {
        return field + ": contains control character U+" + String.format("%04X", cp);
      }
      if (Character.getType(cp) == Character.FORMAT) {
        return field
            + ": contains invisible format character U+"
            + String.format("%04X", cp)
            + " (bidi overrides, zero-width and other Unicode format characters are refused)";
      }
      if (Character.isSurrogate(value.charAt(i)) && !Character.isSupplementaryCodePoint(cp)) {
        return field + ": contains an unpaired surrogate (not valid UTF-8)";
      }
      i += Character.charCount(cp);
    }
    return null;
  }

  private static String text(String field, String value, int minBytes, int maxBytes) {
    return textWithin(field, value, minBytes, maxBytes);
  }

  private static String first(String... problems) {
    for (String p : problems) {
      if (p != null) {
        return p;
      }
    }
    return null;
  }
}
