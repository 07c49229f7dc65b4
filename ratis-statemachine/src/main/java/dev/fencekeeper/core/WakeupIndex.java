package dev.fencekeeper.core;

import java.util.TreeSet;

/**
 * When each resource next needs attention — a lease falls due, a lock-delay ends, an idle record
 * may be forgotten — earliest first. The leader commits a tick when the first one passes; every
 * replica then settles the due resources in the same entry. Each resource is filed at most once,
 * under the time its record remembers ({@code filedWakeupMs}).
 */
final class WakeupIndex {
  private final TreeSet<Wakeup> wakeups = new TreeSet<>();
  private final long idleTimeoutMs;

  WakeupIndex(long idleTimeoutMs) {
    this.idleTimeoutMs = idleTimeoutMs;
  }

  /** Files {@code r} under the next time it needs attention, replacing its previous filing. */
  void refile(ResourceRecord r, long nowMs) {
    long at = Long.MAX_VALUE;
    LeaseRecord lease = r.lease();
    if (lease != null && (lease.isLiveAt(nowMs) || !r.expiryObserved())) {
      at = lease.expiresAtMs();
    }
    if (r.blockedUntilMs() > nowMs && !r.waiters().isEmpty()) {
      at = Math.min(at, r.blockedUntilMs());
    }
    if (r.idleSinceMs() != 0) {
      at = Math.min(at, r.idleSinceMs() + idleTimeoutMs);
    }
    if (at == r.filedWakeupMs) {
      return;
    }
    remove(r);
    if (at != Long.MAX_VALUE) {
      wakeups.add(new Wakeup(at, r.name()));
      r.filedWakeupMs = at;
    }
  }

  /** Takes {@code r} out of the index: it is being forgotten. */
  void remove(ResourceRecord r) {
    if (r.filedWakeupMs != Long.MAX_VALUE) {
      wakeups.remove(new Wakeup(r.filedWakeupMs, r.name()));
      r.filedWakeupMs = Long.MAX_VALUE;
    }
  }

  /**
   * Takes out and returns the name of the first resource due at or before {@code nowMs}, or null
   * when none is; the caller settles it, which files it again.
   */
  String pollDue(long nowMs) {
    if (wakeups.isEmpty() || wakeups.first().atMs() > nowMs) {
      return null;
    }
    return wakeups.pollFirst().resource();
  }

  /**
   * The earliest time at which some resource needs attention (a lease falls due, a lock-delay ends,
   * an idle record may go); Long.MAX_VALUE when none. The leader commits a tick once its clock
   * passes it.
   */
  long nextWakeupMs() {
    return wakeups.isEmpty() ? Long.MAX_VALUE : wakeups.first().atMs();
  }

  private record Wakeup(long atMs, String resource) implements Comparable<Wakeup> {
    @Override
    public int compareTo(Wakeup o) {
      int c = Long.compare(atMs, o.atMs);
      return c != 0 ? c : resource.compareTo(o.resource);
    }
  }
}
