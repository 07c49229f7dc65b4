package dev.fencekeeper.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The receipts of one resource's accepted writes under its newest lease, oldest first, at most as
 * many as the caller allows.
 *
 * <p>They live in flat arrays, not as a map entry, a record and a request-id string per write:
 * under steady writes a receipt lives for seconds, long enough for several young collections to
 * copy it, and those copies were most of the leader's young-collection pauses, which stall every
 * write in flight (docs/benchmarks.md, GC). A request id is kept split into a prefix and a decimal
 * counter, because the client library's ids are a per-process prefix and a counter: one resource's
 * receipts share one prefix string (and, when they keep writing one key, one key string), so a
 * receipt adds no objects. An id without such a counter is kept whole, as its own prefix. Lookups
 * go through an open-addressing table of slot numbers, because a write looks its id up among as
 * many as a thousand receipts.
 */
final class WriteReceipts {
  private static final long NO_COUNTER = -1;
  // Long.MAX_VALUE has 19 digits: 18 always parse.
  private static final int MAX_COUNTER_DIGITS = 18;
  // Arrays up to this size are kept across clear(); larger ones are dropped so an idle resource
  // holds little.
  private static final int KEPT_CAPACITY = 8;

  // The ring of receipts: slot (oldest + i) & (capacity - 1) holds the i-th oldest; capacity is a
  // power of two.
  private String[] prefixes = new String[0];
  private long[] counters = new long[0];
  private int[] hashes = new int[0];
  private String[] firstKeys = new String[0];
  private long[] versions = new long[0];
  private long[] writtenAtMs = new long[0];
  private int oldest;
  private int size;
  // Linear-probing table of slot + 1 (0: empty), twice the ring's capacity.
  private int[] index = new int[0];

  int size() {
    return size;
  }

  /** The receipt of the write that carried {@code requestId}, or null. */
  WriteReceipt find(String requestId) {
    if (size == 0) {
      return null;
    }
    int counterStart = counterStart(requestId);
    long counter = counterAt(requestId, counterStart);
    int slot = slotOf(requestId, counterStart, counter, hash(requestId, counterStart, counter));
    return slot < 0 ? null : receiptAt(slot);
  }

  /**
   * Remembers a receipt. A receipt for the same id is replaced where it stands; otherwise this one
   * becomes the newest. Then the oldest are dropped until at most {@code max} remain.
   */
  void put(String requestId, String firstKey, long version, long writtenAt, int max) {
    int counterStart = counterStart(requestId);
    long counter = counterAt(requestId, counterStart);
    int hash = hash(requestId, counterStart, counter);
    int slot = size == 0 ? -1 : slotOf(requestId, counterStart, counter, hash);
    String newestPrefix = size == 0 ? null : prefixes[newestSlot()];
    String newestKey = size == 0 ? null : firstKeys[newestSlot()];
    if (slot < 0) {
      while (size >= max) {
        dropOldest();
      }
      if (size == prefixes.length) {
        grow(Math.max(KEPT_CAPACITY, prefixes.length * 2));
      }
      slot = (oldest + size) & (prefixes.length - 1);
      prefixes[slot] =
          hasPrefix(requestId, counterStart, newestPrefix)
              ? newestPrefix
              : requestId.substring(0, counterStart);
      counters[slot] = counter;
      hashes[slot] = hash;
      size++;
      addToIndex(slot);
    }
    firstKeys[slot] = firstKey.equals(newestKey) ? newestKey : firstKey;
    versions[slot] = version;
    writtenAtMs[slot] = writtenAt;
    // Only when the limit was lowered since these receipts were taken (a restart with a new
    // config).
    while (size > max) {
      dropOldest();
    }
  }

  void clear() {
    if (prefixes.length > KEPT_CAPACITY) {
      prefixes = new String[0];
      counters = new long[0];
      hashes = new int[0];
      firstKeys = new String[0];
      versions = new long[0];
      writtenAtMs = new long[0];
      index = new int[0];
    } else {
      Arrays.fill(prefixes, null);
      Arrays.fill(firstKeys, null);
      Arrays.fill(index, 0);
    }
    oldest = 0;
    size = 0;
  }

  /** Every receipt, oldest first: for snapshots and inspection, not the write path. */
  List<WriteReceipt> inOrder() {
    List<WriteReceipt> all = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      all.add(receiptAt((oldest + i) & (prefixes.length - 1)));
    }
    return all;
  }

  private WriteReceipt receiptAt(int slot) {
    String requestId =
        counters[slot] == NO_COUNTER ? prefixes[slot] : prefixes[slot] + counters[slot];
    return new WriteReceipt(requestId, firstKeys[slot], versions[slot], writtenAtMs[slot]);
  }

  private int slotOf(String requestId, int counterStart, long counter, int hash) {
    int mask = index.length - 1;
    for (int i = hash & mask; index[i] != 0; i = (i + 1) & mask) {
      int slot = index[i] - 1;
      if (hashes[slot] == hash
          && counters[slot] == counter
          && hasPrefix(requestId, counterStart, prefixes[slot])) {
        return slot;
      }
    }
    return -1;
  }

  private int newestSlot() {
    return (oldest + size - 1) & (prefixes.length - 1);
  }

  private void dropOldest() {
    removeFromIndex(oldest);
    prefixes[oldest] = null;
    firstKeys[oldest] = null;
    oldest = (oldest + 1) & (prefixes.length - 1);
    size--;
  }

  private void addToIndex(int slot) {
    int mask = index.length - 1;
    int i = hashes[slot] & mask;
    while (index[i] != 0) {
      i = (i + 1) & mask;
    }
    index[i] = slot + 1;
  }

  // Linear probing without tombstones: entries after the hole that cannot be found from their home
  // position past it move back into it.
  private void removeFromIndex(int slot) {
    int mask = index.length - 1;
    int hole = hashes[slot] & mask;
    while (index[hole] != slot + 1) {
      hole = (hole + 1) & mask;
    }
    for (int i = (hole + 1) & mask; index[i] != 0; i = (i + 1) & mask) {
      int home = hashes[index[i] - 1] & mask;
      boolean reachableWithoutHole =
          hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
      if (!reachableWithoutHole) {
        index[hole] = index[i];
        hole = i;
      }
    }
    index[hole] = 0;
  }

  private void grow(int capacity) {
    String[] newPrefixes = new String[capacity];
    long[] newCounters = new long[capacity];
    int[] newHashes = new int[capacity];
    String[] newFirstKeys = new String[capacity];
    long[] newVersions = new long[capacity];
    long[] newWrittenAtMs = new long[capacity];
    for (int i = 0; i < size; i++) {
      int slot = (oldest + i) & (prefixes.length - 1);
      newPrefixes[i] = prefixes[slot];
      newCounters[i] = counters[slot];
      newHashes[i] = hashes[slot];
      newFirstKeys[i] = firstKeys[slot];
      newVersions[i] = versions[slot];
      newWrittenAtMs[i] = writtenAtMs[slot];
    }
    prefixes = newPrefixes;
    counters = newCounters;
    hashes = newHashes;
    firstKeys = newFirstKeys;
    versions = newVersions;
    writtenAtMs = newWrittenAtMs;
    oldest = 0;
    index = new int[capacity * 2];
    for (int slot = 0; slot < size; slot++) {
      addToIndex(slot);
    }
  }

  /** Whether {@code requestId}'s part before {@code counterStart} is exactly {@code prefix}. */
  private static boolean hasPrefix(String requestId, int counterStart, String prefix) {
    return prefix != null && prefix.length() == counterStart && requestId.startsWith(prefix);
  }

  /** The id's hash, from its prefix and counter, without making the prefix a string of its own. */
  private static int hash(String requestId, int counterStart, long counter) {
    int h = 0;
    for (int i = 0; i < counterStart; i++) {
      h = 31 * h + requestId.charAt(i);
    }
    h = 31 * h + Long.hashCode(counter);
    // Spread the bits: the table uses the low ones, and consecutive counters differ only there.
    h *= 0x9E3779B9;
    return h ^ (h >>> 16);
  }

  /**
   * Where the id's decimal counter starts: its trailing ASCII digits, when there are 1 to 18 of
   * them without a leading zero (so that prefix and counter give back exactly the id), else the
   * id's length.
   */
  static int counterStart(String requestId) {
    int end = requestId.length();
    int start = end;
    while (start > 0 && isAsciiDigit(requestId.charAt(start - 1))) {
      start--;
    }
    int digits = end - start;
    if (digits == 0
        || digits > MAX_COUNTER_DIGITS
        || (digits > 1 && requestId.charAt(start) == '0')) {
      return end;
    }
    return start;
  }

  private static long counterAt(String requestId, int counterStart) {
    if (counterStart == requestId.length()) {
      return NO_COUNTER;
    }
    long counter = 0;
    for (int i = counterStart; i < requestId.length(); i++) {
      counter = counter * 10 + (requestId.charAt(i) - '0');
    }
    return counter;
  }

  private static boolean isAsciiDigit(char c) {
    return c >= '0' && c <= '9';
  }
}
