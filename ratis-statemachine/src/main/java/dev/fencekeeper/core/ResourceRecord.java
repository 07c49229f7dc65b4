package dev.fencekeeper.core;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * Everything the state knows about one resource. Mutated only by {@link FencingState}; other code
 * sees it through the read-only accessors.
 */
public final class ResourceRecord {
  private final String name;
  private long lastToken;
  private LeaseRecord lease;
  private TreeMap<String, ValueRecord> values = new TreeMap<>();
  // Whether an image shares `values`: then it must not change, and the next change copies it first.
  private boolean valuesShared;
  // Receipts of accepted writes under the lease `lastToken`, oldest first; cleared by the next
  // grant.
  private final WriteReceipts receipts = new WriteReceipts();
  // Queued acquires by request id, in arrival order.
  private final LinkedHashMap<String, Waiter> waiters = new LinkedHashMap<>();
  // Until when no grant may happen: set by an involuntary end of a lease that asked for a
  // lock-delay.
  private long blockedUntilMs;
  // Whether the current lease's expiry has been observed (and announced) already.
  private boolean expiryObserved;
  // When the record last became empty (no lease, waiters or values); 0 while it is not.
  private long idleSinceMs;
  // The time this record is filed under in the state's wake-up index; Long.MAX_VALUE when not
  // filed.
  long filedWakeupMs = Long.MAX_VALUE;

  ResourceRecord(String name) {
    this.name = name;
  }

  public String name() {
    return name;
  }

  /** The highest token ever issued for this resource. */
  public long lastToken() {
    return lastToken;
  }

  /** The newest lease, which may have ended by expiry; null once released. */
  public LeaseRecord lease() {
    return lease;
  }

  public LeaseRecord liveLease(long nowMs) {
    return lease != null && lease.isLiveAt(nowMs) ? lease : null;
  }

  public NavigableMap<String, ValueRecord> values() {
    return Collections.unmodifiableNavigableMap(values);
  }

  /** The receipts of accepted writes under the lease {@link #lastToken()}, oldest first. */
  public List<WriteReceipt> receipts() {
    return receipts.inOrder();
  }

  /**
   * The receipt of the accepted write under {@link #lastToken()} that carried {@code requestId}, or
   * null.
   */
  public WriteReceipt receipt(String requestId) {
    return receipts.find(requestId);
  }

  public Map<String, Waiter> waiters() {
    return Collections.unmodifiableMap(waiters);
  }

  public long blockedUntilMs() {
    return blockedUntilMs;
  }

  public boolean expiryObserved() {
    return expiryObserved;
  }

  public long idleSinceMs() {
    return idleSinceMs;
  }

  /**
   * No lease (live or not yet observed as ended), no waiters, no values: a candidate for removal.
   */
  boolean isEmptyAt(long nowMs) {
    return liveLease(nowMs) == null
        && waiters.isEmpty()
        && values.isEmpty()
        && blockedUntilMs <= nowMs;
  }

  LinkedHashMap<String, Waiter> mutableWaiters() {
    return waiters;
  }

  void setBlockedUntilMs(long v) {
    blockedUntilMs = v;
  }

  void setExpiryObserved(boolean v) {
    expiryObserved = v;
  }

  void setIdleSinceMs(long v) {
    idleSinceMs = v;
  }

  void setLastToken(long token) {
    lastToken = token;
  }

  void setLease(LeaseRecord lease) {
    this.lease = lease;
  }

  TreeMap<String, ValueRecord> mutableValues() {
    if (valuesShared) {
      values = new TreeMap<>(values);
      valuesShared = false;
    }
    return values;
  }

  /**
   * This record as an immutable image. Its values are shared, not copied: the record copies them
   * before it next changes them, so taking an image costs the same for ten keys as for a million.
   */
  StateImage.Resource image() {
    valuesShared = true;
    return new StateImage.Resource(
        name,
        lastToken,
        lease,
        values,
        receipts.inOrder(),
        List.copyOf(waiters.values()),
        blockedUntilMs,
        expiryObserved,
        idleSinceMs);
  }

  WriteReceipts mutableReceipts() {
    return receipts;
  }
}
