package dev.fencekeeper.core;

/** The outcomes every part of the state builds alike: a lease's facts, a rejection's context. */
final class Answers {
  private Answers() {}

  static Outcome.Builder leaseOutcome(long nowMs, Code code, ResourceRecord r, LeaseRecord lease) {
    return Outcome.of(code)
        .token(lease.token())
        .currentToken(r.lastToken())
        .holderOwner(lease.owner())
        .expiresAtMs(lease.expiresAtMs())
        .ttlMs(lease.ttlMs())
        .live(true)
        .nowMs(nowMs);
  }

  /** A rejection names the token sent, the newest token, and the live holder if there is one. */
  static Outcome.Builder rejection(
      long nowMs, Code code, ResourceRecord r, long sentToken, String message) {
    Outcome.Builder b = Outcome.of(code).message(message).sentToken(sentToken).nowMs(nowMs);
    if (r != null) {
      b.currentToken(r.lastToken());
      LeaseRecord live = r.liveLease(nowMs);
      if (live != null) {
        b.holderOwner(live.owner()).expiresAtMs(live.expiresAtMs()).token(live.token());
      }
    }
    return b;
  }

  static String notYours(LeaseRecord lease, String caller) {
    return "lease "
        + lease.token()
        + " was acquired by identity '"
        + lease.identity()
        + "', not '"
        + caller
        + "'";
  }

  static String endedByRestore(long token, String resource) {
    return "lease "
        + token
        + " on '"
        + resource
        + "' ended when this cluster was restored from a backup;"
        + " tokens issued before the restore are no longer accepted: acquire '"
        + resource
        + "' again";
  }

  static String first(String a, String b) {
    return a != null ? a : b;
  }
}
