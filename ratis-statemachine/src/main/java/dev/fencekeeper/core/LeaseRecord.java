package dev.fencekeeper.core;

/**
 * One acquisition of a resource. {@code graceUsed} is set when a leader takeover extended the lease and
 * cleared by a renewal: a lease gets at most one grace per renewal, so back-to-back elections cannot
 * keep a dead holder's lease alive (the etcd bug this design avoids).
 */
public record LeaseRecord(long token, String owner, long ttlMs, long expiresAtMs, boolean graceUsed) {

  public boolean isLiveAt(long nowMs) {
    return expiresAtMs > nowMs;
  }
}
