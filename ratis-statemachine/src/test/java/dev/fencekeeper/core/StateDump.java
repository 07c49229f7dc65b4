package dev.fencekeeper.core;

import java.util.HexFormat;
import java.util.Map;

/**
 * Deterministic renderings for tests: a full dump of a {@link FencingState} (token sequence, term,
 * every resource with its lease, waiters, values and receipts, in map order) and of an {@link
 * Outcome} (every field). Two states are equal for a test exactly when their dumps are equal.
 * {@link #of} leaves time and the bookkeeping that time alone drives aside ({@code nowMs}, the
 * wake-up index, expiry observation, idle and lock-delay marks), because every entry, even a
 * rejected command, may move time forward; {@link #withNow} includes all of it.
 */
final class StateDump {
  private static final HexFormat HEX = HexFormat.of();

  private StateDump() {}

  /** Everything in the state except time and the bookkeeping time alone drives. */
  static String of(FencingState s) {
    return render(s, false);
  }

  /**
   * The full dump: state-machine time, the next wake-up and each resource's time bookkeeping too.
   */
  static String withNow(FencingState s) {
    return "nowMs=" + s.nowMs() + " nextWakeupMs=" + s.nextWakeupMs() + '\n' + render(s, true);
  }

  private static String render(FencingState s, boolean withTime) {
    StringBuilder b = new StringBuilder();
    b.append("lastIssuedToken=")
        .append(s.lastIssuedToken())
        .append(" term=")
        .append(s.term())
        .append('\n');
    for (Map.Entry<String, ResourceRecord> e : s.resources().entrySet()) {
      ResourceRecord r = e.getValue();
      b.append("resource ").append(quote(e.getKey()));
      if (!e.getKey().equals(r.name())) {
        b.append(" (record named ").append(quote(r.name())).append(')');
      }
      b.append(" lastToken=").append(r.lastToken());
      if (withTime) {
        b.append(" blockedUntilMs=")
            .append(r.blockedUntilMs())
            .append(" expiryObserved=")
            .append(r.expiryObserved())
            .append(" idleSinceMs=")
            .append(r.idleSinceMs());
      }
      b.append('\n');
      // Records hold only numbers and strings: their own toString shows every field, new ones
      // included.
      b.append("  lease ").append(r.lease() == null ? "none" : r.lease().toString()).append('\n');
      for (Map.Entry<String, Waiter> w : r.waiters().entrySet()) {
        b.append("  waiter ")
            .append(quote(w.getKey()))
            .append(' ')
            .append(w.getValue())
            .append('\n');
      }
      for (Map.Entry<String, ValueRecord> v : r.values().entrySet()) {
        ValueRecord vr = v.getValue();
        b.append("  value ")
            .append(quote(v.getKey()))
            .append(" bytes=")
            .append(HEX.formatHex(vr.value()))
            .append(" acceptedToken=")
            .append(vr.acceptedToken())
            .append(" version=")
            .append(vr.version())
            .append(" writtenAtMs=")
            .append(vr.writtenAtMs())
            .append('\n');
      }
      for (WriteReceipt wr : r.receipts()) {
        b.append("  receipt ")
            .append(quote(wr.requestId()))
            .append(" firstKey=")
            .append(quote(wr.firstKey()))
            .append(" version=")
            .append(wr.version())
            .append(" writtenAtMs=")
            .append(wr.writtenAtMs())
            .append('\n');
      }
    }
    return b.toString();
  }

  /** Every field of an outcome, so that two outcomes compare equal only if they are. */
  static String render(Outcome o) {
    return o.code()
        + " message="
        + quote(o.message())
        + " token="
        + o.token()
        + " currentToken="
        + o.currentToken()
        + " sentToken="
        + o.sentToken()
        + " holderOwner="
        + quote(o.holderOwner())
        + " expiresAtMs="
        + o.expiresAtMs()
        + " alreadyEnded="
        + o.alreadyEnded()
        + " value="
        + HEX.formatHex(o.value())
        + " acceptedToken="
        + o.acceptedToken()
        + " version="
        + o.version()
        + " writtenAtMs="
        + o.writtenAtMs()
        + " key="
        + quote(o.key())
        + " nowMs="
        + o.nowMs()
        + " ttlMs="
        + o.ttlMs()
        + " live="
        + o.live()
        + " position="
        + o.position();
  }

  /**
   * Quotes and escapes, so names with odd characters cannot make two different dumps look alike.
   */
  private static String quote(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder b = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\' || c < 0x20 || c > 0x7e) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }
}
