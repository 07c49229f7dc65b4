package dev.fencekeeper.core;

import static dev.fencekeeper.core.Code.ACCEPTED;
import static dev.fencekeeper.core.Code.GRANTED;
import static dev.fencekeeper.core.Code.INVALID_ARGUMENT;
import static dev.fencekeeper.core.Code.RENEWED;
import static dev.fencekeeper.core.Harness.T0;
import static dev.fencekeeper.core.Harness.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.fencekeeper.core.Command.KeyWrite;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad input, one row per way to be wrong: each is answered INVALID_ARGUMENT with a message naming
 * the field, and leaves the state exactly as it was (time aside). Every row would otherwise
 * succeed: Acquire rows target a free resource, the others the live lease of "r", so only the bad
 * field stands in the way.
 */
// Preemptive: a core stuck in a loop fails the test instead of hanging the build.
@Timeout(value = 5, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class InvalidInputTest {
  // With Harness.LIMITS: TTL 100 ms .. 60 s, resource 256 B, key 512 B, owner 128 B, value 1 KiB,
  // 4 keys per write, request id 64 B.
  private static final String R257 = "r".repeat(257);
  private static final String E129 = "\u00e9".repeat(129); // 129 chars, 258 UTF-8 bytes
  private static final String K513 = "k".repeat(513);
  private static final String O129 = "o".repeat(129);
  private static final String ID65 = "i".repeat(65);

  static Stream<Arguments> badCommands() {
    List<Arguments> rows = new ArrayList<>();
    // Acquire: resource
    rows.add(row("acquire, empty resource", "resource", t -> new Command.Acquire("", "A", 1000)));
    rows.add(row("acquire, null resource", "resource", t -> new Command.Acquire(null, "A", 1000)));
    rows.add(
        row("acquire, 257-byte resource", "resource", t -> new Command.Acquire(R257, "A", 1000)));
    rows.add(
        row(
            "acquire, 129 chars = 258 UTF-8 bytes",
            "resource",
            t -> new Command.Acquire(E129, "A", 1000)));
    rows.add(
        row(
            "acquire, NUL in resource",
            "resource",
            t -> new Command.Acquire("a\u0000b", "A", 1000)));
    rows.add(
        row(
            "acquire, newline in resource",
            "resource",
            t -> new Command.Acquire("a\nb", "A", 1000)));
    rows.add(
        row(
            "acquire, DEL in resource",
            "resource",
            t -> new Command.Acquire("a\u007fb", "A", 1000)));
    rows.add(
        row(
            "acquire, C1 control in resource",
            "resource",
            t -> new Command.Acquire("a\u0085b", "A", 1000)));
    // Unicode format characters (category Cf) reorder or hide text: a name with U+202E reads
    // backwards in listings.
    rows.add(
        row(
            "acquire, right-to-left override in resource",
            "resource",
            t -> new Command.Acquire("inv\u202Egnp.exe", "A", 1000)));
    rows.add(
        row(
            "acquire, zero-width space in resource",
            "resource",
            t -> new Command.Acquire("a\u200Bb", "A", 1000)));
    rows.add(
        row(
            "acquire, byte-order mark in resource",
            "resource",
            t -> new Command.Acquire("\uFEFFr", "A", 1000)));
    rows.add(
        row(
            "acquire, supplementary format character in resource",
            "resource",
            t -> new Command.Acquire("r\uDB40\uDC01", "A", 1000))); // U+E0001 LANGUAGE TAG
    rows.add(
        row(
            "acquire, bidi isolate in owner",
            "owner",
            t -> new Command.Acquire("fresh", "A\u2066B\u2069", 1000)));
    rows.add(
        row(
            "acquire, unpaired high surrogate",
            "resource",
            t -> new Command.Acquire("a\ud800b", "A", 1000)));
    rows.add(
        row(
            "acquire, high surrogate at end",
            "resource",
            t -> new Command.Acquire("ab\ud83d", "A", 1000)));
    rows.add(
        row(
            "acquire, lone low surrogate",
            "resource",
            t -> new Command.Acquire("\ude00", "A", 1000)));
    rows.add(
        row(
            "acquire, reversed surrogate pair",
            "resource",
            t -> new Command.Acquire("\ude00\ud83d", "A", 1000)));
    // Acquire: owner
    rows.add(
        row("acquire, 129-byte owner", "owner", t -> new Command.Acquire("fresh", O129, 1000)));
    rows.add(row("acquire, null owner", "owner", t -> new Command.Acquire("fresh", null, 1000)));
    rows.add(
        row("acquire, tab in owner", "owner", t -> new Command.Acquire("fresh", "A\tB", 1000)));
    rows.add(
        row(
            "acquire, unpaired surrogate in owner",
            "owner",
            t -> new Command.Acquire("fresh", "A\ud800", 1000)));
    // Acquire: ttl
    rows.add(row("acquire, ttl below min", "ttl", t -> new Command.Acquire("fresh", "A", 99)));
    rows.add(row("acquire, ttl zero", "ttl", t -> new Command.Acquire("fresh", "A", 0)));
    rows.add(row("acquire, ttl negative", "ttl", t -> new Command.Acquire("fresh", "A", -1000)));
    rows.add(row("acquire, ttl above max", "ttl", t -> new Command.Acquire("fresh", "A", 60_001)));
    rows.add(
        row(
            "acquire, ttl Long.MAX_VALUE",
            "ttl",
            t -> new Command.Acquire("fresh", "A", Long.MAX_VALUE)));
    // Renew
    rows.add(row("renew, ttl below min", "ttl", t -> new Command.Renew("r", t, 99)));
    rows.add(row("renew, ttl negative", "ttl", t -> new Command.Renew("r", t, -1)));
    rows.add(row("renew, ttl above max", "ttl", t -> new Command.Renew("r", t, 60_001)));
    rows.add(row("renew, token zero", "token", t -> new Command.Renew("r", 0, 1000)));
    rows.add(row("renew, token negative", "token", t -> new Command.Renew("r", -t, 1000)));
    rows.add(row("renew, empty resource", "resource", t -> new Command.Renew("", t, 1000)));
    // Release
    rows.add(row("release, token zero", "token", t -> new Command.Release("r", 0)));
    rows.add(
        row(
            "release, token Long.MIN_VALUE",
            "token",
            t -> new Command.Release("r", Long.MIN_VALUE)));
    rows.add(row("release, 257-byte resource", "resource", t -> new Command.Release(R257, t)));
    // Write: resource, token, request id
    rows.add(
        row(
            "write, control char in resource",
            "resource",
            t -> write("r\u0001", t, "", put("k", 1))));
    rows.add(row("write, token zero", "token", t -> write("r", 0, "", put("k", 1))));
    rows.add(row("write, token negative", "token", t -> write("r", -1, "", put("k", 1))));
    rows.add(row("write, 65-byte request id", "requestId", t -> write("r", t, ID65, put("k", 1))));
    rows.add(
        row(
            "write, control char in request id",
            "requestId",
            t -> write("r", t, "req\r1", put("k", 1))));
    rows.add(
        row(
            "write, unpaired surrogate in request id",
            "requestId",
            t -> write("r", t, "req\udbff", put("k", 1))));
    // Write: keys and values
    rows.add(row("write, empty key", "key", t -> write("r", t, "", put("", 1))));
    rows.add(
        row(
            "write, null key",
            "key",
            t -> write("r", t, "", new KeyWrite(null, new byte[1], false))));
    rows.add(row("write, 513-byte key", "key", t -> write("r", t, "", put(K513, 1))));
    rows.add(row("write, newline in key", "key", t -> write("r", t, "", put("a\nb", 1))));
    rows.add(
        row("write, left-to-right mark in key", "key", t -> write("r", t, "", put("k\u200E", 1))));
    rows.add(
        row("write, unpaired surrogate in key", "key", t -> write("r", t, "", put("k\udc00", 1))));
    rows.add(
        row(
            "write, bad key after a good one",
            "key",
            t -> write("r", t, "", put("good", 1), put("", 1))));
    rows.add(
        row(
            "write, duplicate key",
            "key",
            t -> write("r", t, "", put("a", 1), put("b", 1), put("a", 2))));
    rows.add(
        row(
            "write, duplicate key as put and delete",
            "key",
            t -> write("r", t, "", put("a", 1), KeyWrite.delete("a"))));
    rows.add(row("write, 1025-byte value", "value", t -> write("r", t, "", put("k", 1025))));
    rows.add(
        row(
            "write, oversized value on second key",
            "value",
            t -> write("r", t, "", put("a", 1024), put("b", 1025))));
    rows.add(
        row(
            "write, values within limit each but over it together",
            "value",
            t -> write("r", t, "", put("a", 600), put("b", 425))));
    rows.add(
        row(
            "write, delete carrying a value",
            "value",
            t -> write("r", t, "", new KeyWrite("k", bytes("x"), true))));
    rows.add(
        row(
            "write, too many keys",
            "writes",
            t ->
                write(
                    "r", t, "", put("a", 1), put("b", 1), put("c", 1), put("d", 1), put("e", 1))));
    rows.add(row("write, no keys", "writes", t -> write("r", t, "")));
    return rows.stream();
  }

  // Each bad command is INVALID_ARGUMENT naming the field, the leader's pre-check agrees, and the
  // state is unchanged.
  @ParameterizedTest(name = "{0}")
  @MethodSource("badCommands")
  void rejectedAndStateUnchanged(String name, String field, LongFunction<Command> command) {
    Harness h = new Harness();
    long t = liveState(h);
    Command c = command.apply(t);
    String before = h.dump();
    long nowBefore = h.state.nowMs();

    Outcome o = h.apply(T0 + 10, c);

    assertThat(o.code()).isEqualTo(INVALID_ARGUMENT);
    assertThat(o.message()).as("message of %s", name).containsPattern(word(field));
    assertThat(h.state.validate(c)).isEqualTo(o.message());
    assertThat(h.dump()).isEqualTo(before);
    assertThat(h.state.nowMs()).isGreaterThanOrEqualTo(nowBefore);
  }

  static Stream<Arguments> badQueries() {
    return Stream.of(
        query("read, empty resource", "resource", s -> s.read("", "k")),
        query("read, control char in resource", "resource", s -> s.read("r\u0000", "k")),
        query("read, right-to-left override in key", "key", s -> s.read("r", "k\u202E")),
        query("lease, soft hyphen in resource", "resource", s -> s.lease("r\u00AD")),
        query("read, 258-byte resource", "resource", s -> s.read(E129, "k")),
        query("read, empty key", "key", s -> s.read("r", "")),
        query("read, 513-byte key", "key", s -> s.read("r", K513)),
        query("read, unpaired surrogate in key", "key", s -> s.read("r", "\ud800")),
        query("lease, empty resource", "resource", s -> s.lease("")),
        query("lease, null resource", "resource", s -> s.lease(null)),
        query("validate, token zero", "token", s -> s.validateToken("r", 0)),
        query("validate, negative token", "token", s -> s.validateToken("r", -7)),
        query("validate, 257-byte resource", "resource", s -> s.validateToken(R257, 1)));
  }

  // Queries with bad input answer INVALID_ARGUMENT naming the field, instead of throwing, and
  // change nothing.
  @ParameterizedTest(name = "{0}")
  @MethodSource("badQueries")
  void badQueryRejected(String name, String field, Function<FencingState, Outcome> query) {
    Harness h = new Harness();
    liveState(h);
    String before = StateDump.withNow(h.state);

    Outcome o = query.apply(h.state);

    assertThat(o.code()).isEqualTo(INVALID_ARGUMENT);
    assertThat(o.message()).as("message of %s", name).containsPattern(word(field));
    assertThat(StateDump.withNow(h.state)).isEqualTo(before);
  }

  // Inputs exactly at each bound are accepted: the limits are inclusive and counted in UTF-8 bytes,
  // not chars.
  @Test
  void boundsAreInclusive() {
    Harness h = new Harness();
    String r256 = "\u00e9".repeat(128); // 256 bytes
    Outcome acq = h.acquire(T0, r256, "o".repeat(128), 60_000);
    assertThat(acq.code()).isEqualTo(GRANTED);
    assertThat(h.acquire(T0, "min", "", 100).code()).isEqualTo(GRANTED);
    assertThat(h.acquire(T0, "emoji-\ud83d\udd12", "owner \ud83d\ude00", 100).code())
        .isEqualTo(GRANTED);
    assertThat(h.renew(T0 + 1, r256, acq.token(), 100).code()).isEqualTo(RENEWED);

    Outcome w =
        h.write(
            T0 + 2,
            r256,
            acq.token(),
            "i".repeat(64),
            put("k".repeat(512), 1000),
            put("b", 0),
            KeyWrite.delete("c"),
            put("\u20ac".repeat(170), 24));
    assertThat(w.code()).isEqualTo(ACCEPTED); // 4 keys, 1024 value bytes in total
  }

  // Every bad row above is also rejected when nothing was ever leased (no record is created by a
  // rejection).
  @Test
  @SuppressWarnings("unchecked")
  void rejectionOnEmptyStateCreatesNothing() {
    for (Arguments row : badCommands().toList()) {
      Harness h = new Harness();
      Command c = ((LongFunction<Command>) row.get()[2]).apply(1);
      Outcome o = h.apply(T0, c);
      assertThat(o.code()).as("%s", row.get()[0]).isEqualTo(INVALID_ARGUMENT);
      assertThat(h.state.resources()).as("%s", row.get()[0]).isEmpty();
      assertThat(h.state.lastIssuedToken()).isZero();
    }
  }

  // ---------------------------------------------------------------------------------------------

  /** "r" held by A with a 10 s lease and one value; "fresh" never leased. Returns A's token. */
  private static long liveState(Harness h) {
    long t = h.acquire(T0, "r", "A", 10_000).token();
    h.write(T0 + 1, "r", t, "req-0", put("existing", 3));
    return t;
  }

  private static Pattern word(String field) {
    return Pattern.compile("\\b" + Pattern.quote(field) + "\\b");
  }

  private static Arguments row(String name, String field, LongFunction<Command> command) {
    return arguments(name, field, command);
  }

  private static Arguments query(String name, String field, Function<FencingState, Outcome> query) {
    return arguments(name, field, query);
  }

  private static KeyWrite put(String key, int valueBytes) {
    return KeyWrite.put(key, new byte[valueBytes]);
  }

  private static Command.Write write(
      String resource, long token, String requestId, KeyWrite... writes) {
    return new Command.Write(resource, token, List.of(writes), requestId);
  }
}
