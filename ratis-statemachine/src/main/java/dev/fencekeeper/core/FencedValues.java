package dev.fencekeeper.core;

import dev.fencekeeper.config.Limits;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * The values leases protect, with their write receipts. A write is accepted only with the token of
 * the resource's live lease, never with a superseded one, and changes all its keys or none; a
 * retried write (same request id, same lease) is answered from its receipt and changes nothing.
 * Reading and listing values is here too. The leases themselves are {@link Leases}'s.
 */
final class FencedValues {
  private final Limits limits;
  private final Validation validation;
  private final Leases leases;

  FencedValues(Limits limits, Validation validation, Leases leases) {
    this.limits = limits;
    this.validation = validation;
    this.leases = leases;
  }

  Outcome write(Command.Write w) {
    long nowMs = leases.nowMs();
    ResourceRecord r = leases.record(w.resource());
    if (r == null || w.token() > r.lastToken()) {
      return Answers.rejection(
              nowMs,
              Code.UNKNOWN_TOKEN,
              r,
              w.token(),
              "token " + w.token() + " was never issued for '" + w.resource() + "'")
          .build();
    }
    if (!w.requestId().isEmpty() && w.token() == r.lastToken()) {
      WriteReceipt receipt = r.receipt(w.requestId());
      if (receipt != null) {
        // A retry of a write that was applied: answer as the first time did, change nothing.
        return Outcome.of(Code.ACCEPTED)
            .message("request " + w.requestId() + " was already applied")
            .token(w.token())
            .currentToken(r.lastToken())
            .acceptedToken(w.token())
            .key(receipt.firstKey())
            .version(receipt.version())
            .writtenAtMs(receipt.writtenAtMs())
            .nowMs(nowMs)
            .facts(new Outcome.Facts(true, false, 0, 0))
            .build();
      }
    }
    if (w.token() < r.lastToken()) {
      return Answers.rejection(
              nowMs,
              Code.STALE_TOKEN,
              r,
              w.token(),
              "token " + w.token() + " is stale: '" + w.resource() + "' has token " + r.lastToken())
          .build();
    }
    LeaseRecord live = r.liveLease(nowMs);
    if (live == null) {
      return Answers.rejection(
              nowMs,
              Code.LEASE_EXPIRED,
              r,
              w.token(),
              leases.tokens().issuedBeforeRestore(w.token())
                  ? Answers.endedByRestore(w.token(), w.resource())
                  : "lease " + w.token() + " on '" + w.resource() + "' has ended")
          .build();
    }
    if (live != null && live.token() == w.token() && !live.permits(w.caller())) {
      return Answers.rejection(
              nowMs, Code.PERMISSION_DENIED, r, w.token(), Answers.notYours(live, w.caller()))
          .build();
    }
    for (Command.KeyWrite kw : w.writes()) {
      ValueRecord existing = r.values().get(kw.key());
      if (existing != null && existing.acceptedToken() > w.token()) {
        return Answers.rejection(
                nowMs,
                Code.STALE_TOKEN,
                r,
                w.token(),
                "key '" + kw.key() + "' accepted token " + existing.acceptedToken())
            .key(kw.key())
            .acceptedToken(existing.acceptedToken())
            .build();
      }
    }
    int newKeys = 0;
    for (Command.KeyWrite kw : w.writes()) {
      newKeys +=
          kw.delete()
              ? (r.values().containsKey(kw.key()) ? -1 : 0)
              : (r.values().containsKey(kw.key()) ? 0 : 1);
    }
    if (r.values().size() + newKeys > limits.maxKeysPerResource()) {
      return Answers.rejection(
              nowMs,
              Code.INVALID_ARGUMENT,
              r,
              w.token(),
              "'"
                  + w.resource()
                  + "' would hold "
                  + (r.values().size() + newKeys)
                  + " keys; limits.keys-per-resource.max is "
                  + limits.maxKeysPerResource())
          .build();
    }
    // Every check passed: change all keys together.
    long firstVersion = 0;
    long keysDelta = 0;
    long bytesDelta = 0;
    for (Command.KeyWrite kw : w.writes()) {
      ValueRecord existing = r.values().get(kw.key());
      long version = (existing == null ? 0 : existing.version()) + 1;
      if (existing != null) {
        keysDelta--;
        bytesDelta -= existing.value().length;
      }
      if (kw.delete()) {
        r.mutableValues().remove(kw.key());
      } else {
        r.mutableValues().put(kw.key(), new ValueRecord(kw.value(), w.token(), version, nowMs));
        keysDelta++;
        bytesDelta += kw.value().length;
      }
      if (firstVersion == 0) {
        firstVersion = version;
      }
    }
    String firstKey = w.writes().get(0).key();
    if (!w.requestId().isEmpty()) {
      r.mutableReceipts()
          .put(w.requestId(), firstKey, firstVersion, nowMs, limits.maxRequestIdsPerLease());
    }
    return Outcome.of(Code.ACCEPTED)
        .token(w.token())
        .currentToken(r.lastToken())
        .acceptedToken(w.token())
        .key(firstKey)
        .version(firstVersion)
        .writtenAtMs(nowMs)
        .holderOwner(live == null ? "" : live.owner())
        .expiresAtMs(live == null ? 0 : live.expiresAtMs())
        .nowMs(nowMs)
        .facts(new Outcome.Facts(false, false, keysDelta, bytesDelta))
        .build();
  }

  Outcome read(String resource, String key) {
    long nowMs = leases.nowMs();
    String invalid = Answers.first(validation.resource(resource), validation.key(key));
    if (invalid != null) {
      return Outcome.invalid(invalid);
    }
    ResourceRecord r = leases.record(resource);
    ValueRecord v = r == null ? null : r.values().get(key);
    if (v == null) {
      return Outcome.of(Code.NOT_FOUND)
          .message("no value for '" + key + "' in '" + resource + "'")
          .currentToken(r == null ? 0 : r.lastToken())
          .key(key)
          .nowMs(nowMs)
          .build();
    }
    return Outcome.of(Code.FOUND)
        .value(v.value())
        .acceptedToken(v.acceptedToken())
        .version(v.version())
        .writtenAtMs(v.writtenAtMs())
        .currentToken(r.lastToken())
        .key(key)
        .nowMs(nowMs)
        .build();
  }

  /**
   * Up to {@code limit} keys of {@code resource} starting with {@code prefix}, after {@code after}.
   */
  List<Map.Entry<String, ValueRecord>> listKeys(
      String resource, String prefix, String after, int limit) {
    ResourceRecord r = leases.record(resource);
    return r == null
        ? List.of()
        : new ArrayList<>(page(r.values(), prefix, after, limit).entrySet());
  }

  static <V> NavigableMap<String, V> page(
      NavigableMap<String, V> all, String prefix, String after, int limit) {
    boolean fromPrefix = after.isEmpty() || after.compareTo(prefix) < 0;
    TreeMap<String, V> page = new TreeMap<>();
    for (Map.Entry<String, V> e : all.tailMap(fromPrefix ? prefix : after, fromPrefix).entrySet()) {
      if (!e.getKey().startsWith(prefix) || page.size() >= limit) {
        break;
      }
      page.put(e.getKey(), e.getValue());
    }
    return page;
  }
}
