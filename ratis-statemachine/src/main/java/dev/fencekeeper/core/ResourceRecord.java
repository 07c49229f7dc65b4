package dev.fencekeeper.core;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * Everything the state knows about one resource. Mutated only by {@link FencingState}; other code sees
 * it through the read-only accessors.
 */
public final class ResourceRecord {
  private final String name;
  private long lastToken;
  private LeaseRecord lease;
  private final TreeMap<String, ValueRecord> values = new TreeMap<>();
  // Receipts of accepted writes under the lease `lastToken`, oldest first; cleared by the next grant.
  private final LinkedHashMap<String, WriteReceipt> receipts = new LinkedHashMap<>();

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

  public Map<String, WriteReceipt> receipts() {
    return Collections.unmodifiableMap(receipts);
  }

  void setLastToken(long token) {
    lastToken = token;
  }

  void setLease(LeaseRecord lease) {
    this.lease = lease;
  }

  TreeMap<String, ValueRecord> mutableValues() {
    return values;
  }

  LinkedHashMap<String, WriteReceipt> mutableReceipts() {
    return receipts;
  }
}
