package dev.fencekeeper.metrics;

import dev.fencekeeper.core.Command;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One structured line per rejected write, on logger {@value #LOGGER} at INFO:
 *
 * <pre>
 * write rejected resource=daily-sales-report key=2026-11-29 sentToken=3 currentToken=7 holderOwner=worker-b code=STALE_TOKEN
 * </pre>
 *
 * <p>Values are {@code key=value}; a value that is empty or holds blanks, quotes, '=' or control
 * characters is written in double quotes with Java-style escapes, and one longer than {@value
 * #MAX_VALUE_CHARS} characters is cut short (its length noted), so one line always stays one line.
 * Only the node that decided the rejection as leader writes it — the leader refusing it before the
 * log, or applying the entry it stamped itself — so a three-node cluster logs each rejection once,
 * not three times, and replaying the log after a restart logs nothing again.
 */
public final class RejectionLog {
  public static final String LOGGER = "dev.fencekeeper.rejections";
  static final int MAX_VALUE_CHARS = 300;

  private static final Logger LOG = LoggerFactory.getLogger(LOGGER);

  private RejectionLog() {}

  /**
   * Logs the rejection of {@code write}. {@code failedKey} is the key the check failed on, if the
   * answer named one; otherwise the write's keys are listed.
   */
  static void log(
      Command.Write write,
      String code,
      long sentToken,
      long currentToken,
      String holderOwner,
      String failedKey) {
    if (!LOG.isInfoEnabled()) {
      return;
    }
    LOG.info(line(write, code, sentToken, currentToken, holderOwner, failedKey));
  }

  static String line(
      Command.Write write,
      String code,
      long sentToken,
      long currentToken,
      String holderOwner,
      String failedKey) {
    String key =
        failedKey != null && !failedKey.isEmpty()
            ? failedKey
            : write.writes().stream().map(Command.KeyWrite::key).collect(Collectors.joining(","));
    return "write rejected"
        + " resource="
        + value(write.resource())
        + " key="
        + value(key)
        + " sentToken="
        + (sentToken != 0 ? sentToken : write.token())
        + " currentToken="
        + currentToken
        + " holderOwner="
        + value(holderOwner)
        + " code="
        + code;
  }

  /** The value as is when it is one plain word, else quoted and escaped; always on one line. */
  static String value(String text) {
    String s = text == null ? "" : text;
    String suffix = "";
    if (s.length() > MAX_VALUE_CHARS) {
      suffix = "...(" + s.length() + " chars)";
      s = s.substring(0, MAX_VALUE_CHARS);
    }
    boolean plain = !s.isEmpty() && suffix.isEmpty();
    for (int i = 0; i < s.length() && plain; i++) {
      char c = s.charAt(i);
      plain =
          c > ' '
              && c != '"'
              && c != '='
              && c != '\\'
              && c != 0x7f
              && !Character.isWhitespace(c)
              && !Character.isISOControl(c);
    }
    if (plain) {
      return s;
    }
    StringBuilder quoted = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> quoted.append("\\\"");
        case '\\' -> quoted.append("\\\\");
        case '\n' -> quoted.append("\\n");
        case '\r' -> quoted.append("\\r");
        case '\t' -> quoted.append("\\t");
        default -> {
          if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
            quoted.append(String.format("\\u%04x", (int) c));
          } else {
            quoted.append(c);
          }
        }
      }
    }
    return quoted.append(suffix).append('"').toString();
  }
}
