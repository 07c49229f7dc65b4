package dev.fencekeeper.core;

import java.util.Collections;
import java.util.List;
import java.util.NavigableMap;

/**
 * An immutable picture of a {@link FencingState} at one applied index: what a snapshot file holds,
 * and the one way a state is rebuilt from one ({@link FencingState#restore}). Taking it from a live
 * state is cheap ({@link FencingState#image}): each resource's values are shared with the live
 * state until the state next changes them, so the image can be written out while apply goes on.
 *
 * @param term the Raft term of the last applied entry
 * @param nowMs the state-machine time
 * @param lastIssuedToken the highest token the group has issued
 * @param lineage which starting state the replica applies its log to ({@link
 *     FencingState#lineage()})
 * @param resources every resource, in name order
 */
public record StateImage(
    long term, long nowMs, long lastIssuedToken, long lineage, List<Resource> resources) {

  public StateImage {
    resources = List.copyOf(resources);
  }

  /**
   * One resource as the state keeps it.
   *
   * @param lease the newest lease, which may have ended by expiry; null once released
   * @param values by key; the caller hands the map over and no longer changes it
   * @param receipts the receipts of accepted writes under {@code lastToken}, oldest first
   * @param waiters queued acquires in arrival order
   * @param blockedUntilMs until when no grant may happen (lock-delay)
   * @param expiryObserved whether the lease's expiry has been announced already
   * @param idleSinceMs when the record became empty; 0 while it is not
   */
  public record Resource(
      String name,
      long lastToken,
      LeaseRecord lease,
      NavigableMap<String, ValueRecord> values,
      List<WriteReceipt> receipts,
      List<Waiter> waiters,
      long blockedUntilMs,
      boolean expiryObserved,
      long idleSinceMs) {

    public Resource {
      values = Collections.unmodifiableNavigableMap(values);
      receipts = List.copyOf(receipts);
      waiters = List.copyOf(waiters);
    }

    /** A resource with only a token, a lease and values, as tests and tools build one. */
    public static Resource of(
        String name, long lastToken, LeaseRecord lease, NavigableMap<String, ValueRecord> values) {
      return new Resource(name, lastToken, lease, values, List.of(), List.of(), 0, false, 0);
    }
  }
}
