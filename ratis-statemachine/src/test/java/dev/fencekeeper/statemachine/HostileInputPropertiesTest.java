package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.ReplicaDivergedException;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.BackupRequest;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.CancelWaitRequest;
import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.LeaseQuery;
import dev.fencekeeper.proto.ListRequest;
import dev.fencekeeper.proto.ReadRequest;
import dev.fencekeeper.proto.ReleaseRequest;
import dev.fencekeeper.proto.RenewRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.RevokeRequest;
import dev.fencekeeper.proto.ValidateRequest;
import dev.fencekeeper.proto.WriteRequest;
import dev.fencekeeper.statemachine.proto.LoggedCommand;
import dev.fencekeeper.statemachine.proto.Tick;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.CodedOutputStream;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * Hostile input against the request decoder and the core, through the real Ratis adapter: random
 * bytes, truncated, extended and bit-flipped requests, unknown enum values, negative and huge
 * numbers, invalid UTF-8, control characters, oversized values, spoofed callers. Every request that
 * decodes is handed over as a node's client port hands it over (its caller stamped on it and on
 * every request of a batch, under the client port's client id), including what the client port
 * itself refuses before the log (no command, a revoke by a non-admin), so apply must cope with
 * those too; bytes that do not decode never get past the client port's transport. Nothing throws
 * out of startTransaction, apply or a query, every answer decodes, and a refused or rejected
 * command leaves the state digest as it was.
 *
 * <p>Runs jqwik's default 1000 tries per property in CI; more from the command line with e.g.
 * {@code ./mvnw -o -pl ratis-statemachine -am verify -Dtest=HostileInputPropertiesTest
 * -Dsurefire.failIfNoSpecifiedTests=false -Djqwik.tries.default=100000}.
 */
class HostileInputPropertiesTest {
  private static final long T0 = 1_700_000_000_000L;
  // Small enough that generated values cross every bound.
  private static final Limits LIMITS =
      Limits.builder()
          .minTtl(Duration.ofMillis(100))
          .maxTtl(Duration.ofSeconds(60))
          .takeoverGrace(Duration.ofSeconds(2))
          .maxResourceBytes(32)
          .maxKeyBytes(32)
          .maxOwnerBytes(32)
          .maxValueBytes(256)
          .maxKeysPerWrite(4)
          .maxRequestIdBytes(16)
          .maxRequestIdsPerLease(4)
          .idleTimeout(Duration.ofMinutes(10))
          .waiterLiveness(Duration.ofSeconds(30))
          .maxWaitersPerResource(3)
          .maxKeysPerResource(6)
          .maxResources(20)
          .maxWatchesPerClient(2)
          .build();
  private static final List<String> CALLERS = List.of("", "alice", "bob", "fencekeeper-admin");
  private static final List<String> NAMES = List.of("r1", "r2", "r3", "", "k1");

  @Property
  void hostileCommandsNeverThrowAndRejectionsChangeNothing(
      @ForAll("hostileRequestSequences") List<byte[]> requests) {
    Replica replica = seeded();
    for (byte[] bytes : requests) {
      Optional<Request> parsed = parse(bytes);
      if (parsed.isEmpty()) {
        continue;
      }
      FencingStateMachine.StateDigest before = replica.sm.digest();
      Response answer = replica.submit(stamped(parsed.get()));
      assertThat(answer.getCode()).isNotEqualTo(ResultCode.INTERNAL);
      if (isRejection(answer.getCode())) {
        assertThat(replica.sm.digest().sha256()).as("%s", answer).isEqualTo(before.sha256());
      }
    }
  }

  @Property
  void garbageLogEntriesAreAnsweredNotThrown(@ForAll @Size(max = 300) byte[] logData)
      throws Exception {
    Replica replica = seeded();
    String before = replica.sm.digest().sha256();
    Response answer;
    try {
      answer = replica.apply(UnsafeByteOperations.unsafeWrap(logData));
    } catch (ReplicaDivergedException e) {
      // The one deliberate stop: a takeover naming another lineage. Only a node's own internal
      // client can propose takeovers (the submit property shows clients cannot), so this is no
      // client's doing.
      LoggedCommand logged = LoggedCommand.parseFrom(logData);
      assertThat(logged.hasTakeover() && logged.getTakeover().hasLineage()).isTrue();
      assertThat(logged.getTakeover().getLineage())
          .isNotEqualTo(replica.sm.read(FencingState::lineage));
      return;
    }
    if (answer.getCode() == ResultCode.INVALID_ARGUMENT) {
      assertThat(replica.sm.digest().sha256()).isEqualTo(before);
    }
  }

  @Property
  void hostileQueriesAreAnswered(@ForAll("hostileRequests") byte[] bytes) throws Exception {
    Replica replica = seeded();
    Optional<Request> parsed = parse(bytes);
    if (parsed.isEmpty()
        || parsed.get().getCommandCase() == Request.CommandCase.WATCH
        || parsed.get().getCommandCase() == Request.CommandCase.BACKUP) {
      return; // undecodable: refused by the transport; long polls and backup files: cluster tests
    }
    Response answer = replica.sm.answerQuery(stamped(parsed.get())).get();
    assertThat(answer.getCode()).isNotEqualTo(ResultCode.INTERNAL);
  }

  // ---------------------------------------------------------------------------------------------

  /** Rejections and refusals: every code that promises "nothing changed". */
  private static boolean isRejection(ResultCode code) {
    return switch (code) {
      case HELD,
          LEASE_LOST,
          NOT_HOLDER,
          STALE_TOKEN,
          LEASE_EXPIRED,
          UNKNOWN_TOKEN,
          INVALID_ARGUMENT,
          LOCK_DELAYED,
          PERMISSION_DENIED,
          OVERLOADED,
          NOT_FOUND ->
          true;
      default -> false;
    };
  }

  /**
   * {@code request} as the client port hands it on: the caller it claims stands for the identity
   * its connection established, which the port writes over every request of a batch as well.
   */
  private static Request stamped(Request request) {
    if (!request.hasBatch()) {
      return request;
    }
    BatchRequest.Builder batch = BatchRequest.newBuilder();
    for (Request inner : request.getBatch().getRequestsList()) {
      batch.addRequests(inner.toBuilder().setCaller(request.getCaller()).clearReadOverloaded());
    }
    return request.toBuilder().setBatch(batch).build();
  }

  private static Optional<Request> parse(byte[] bytes) {
    try {
      return Optional.of(Request.parseFrom(bytes));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /**
   * A state machine with leases (one with an identity), values and a waiter, and a frozen clock.
   */
  private Replica seeded() {
    Replica r = new Replica(new FencingStateMachine(LIMITS, () -> T0));
    r.apply(
        UnsafeByteOperations.unsafeWrap(
            LoggedCommand.newBuilder()
                .setStampMs(T0)
                .setTick(Tick.getDefaultInstance())
                .build()
                .toByteArray()));
    long token =
        r.submit(
                with(
                    "alice",
                    Request.newBuilder()
                        .setAcquire(
                            AcquireRequest.newBuilder()
                                .setResource("r1")
                                .setOwner("a")
                                .setTtlMs(30_000)
                                .setRequestId("q1"))))
            .getToken();
    r.submit(
        with(
            "alice",
            Request.newBuilder()
                .setWrite(
                    WriteRequest.newBuilder()
                        .setResource("r1")
                        .setToken(token)
                        .addWrites(
                            KeyWrite.newBuilder()
                                .setKey("k1")
                                .setValue(ByteString.copyFromUtf8("v"))))));
    r.submit(
        with(
            "",
            Request.newBuilder()
                .setAcquire(
                    AcquireRequest.newBuilder().setResource("r2").setOwner("b").setTtlMs(30_000))));
    r.submit(
        with(
            "bob",
            Request.newBuilder()
                .setAcquire(
                    AcquireRequest.newBuilder()
                        .setResource("r2")
                        .setOwner("w")
                        .setTtlMs(1_000)
                        .setRequestId("q2")
                        .setWaitMs(20_000))));
    return r;
  }

  private static Request with(String caller, Request.Builder request) {
    return request.setCaller(caller).build();
  }

  private static final class Replica {
    final FencingStateMachine sm;
    final AsClientPort port;
    long index;

    Replica(FencingStateMachine sm) {
      this.sm = sm;
      this.port = new AsClientPort(sm);
    }

    /** As a leader would: startTransaction for its client port, then apply the logged entry. */
    Response submit(Request stamped) {
      TransactionContext trx = port.start(stamped);
      assertThat(trx.getException()).as("refused before the log").isNull();
      return apply(trx.getStateMachineLogEntry().getLogData());
    }

    Response apply(ByteString logData) {
      LogEntryProto entry =
          LogEntryProto.newBuilder()
              .setTerm(1)
              .setIndex(++index)
              .setStateMachineLogEntry(StateMachineLogEntryProto.newBuilder().setLogData(logData))
              .build();
      TransactionContext trx =
          TransactionContext.newBuilder()
              .setStateMachine(sm)
              .setServerRole(RaftPeerRole.FOLLOWER)
              .setLogEntry(entry)
              .build();
      try {
        return Response.parseFrom(
            sm.applyTransaction(trx).join().getContent().asReadOnlyByteBuffer());
      } catch (IOException e) {
        throw new AssertionError("apply answered bytes that are no Response", e);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Generators

  @Provide
  Arbitrary<List<byte[]>> hostileRequestSequences() {
    return hostileRequests().list().ofMinSize(1).ofMaxSize(12);
  }

  @Provide
  Arbitrary<byte[]> hostileRequests() {
    return hostileRequestBytes();
  }

  /**
   * Every kind of hostile request this class generates, for other fuzz runs (the cluster's) too.
   */
  static Arbitrary<byte[]> hostileRequestBytes() {
    Arbitrary<byte[]> structured = structuredRequests().map(Request::toByteArray);
    return Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(4, structured),
        net.jqwik.api.Tuple.of(3, mutated(structured)),
        net.jqwik.api.Tuple.of(1, Arbitraries.bytes().array(byte[].class).ofMaxSize(200)),
        net.jqwik.api.Tuple.of(1, invalidUtf8Names()),
        net.jqwik.api.Tuple.of(1, unknownListKind()));
  }

  private static Arbitrary<Request> structuredRequests() {
    Arbitrary<String> name = Arbitraries.oneOf(Arbitraries.of(NAMES), hostileStrings());
    Arbitrary<Long> number =
        Arbitraries.oneOf(
            Arbitraries.longs(),
            Arbitraries.of(
                0L, -1L, 1L, 100L, 30_000L, Long.MAX_VALUE, Long.MIN_VALUE, 3L, 4L, 5L, 6L));
    Arbitrary<Integer> smallInt =
        Arbitraries.oneOf(Arbitraries.integers(), Arbitraries.of(0, -1, 1, 1000, 5000));
    Arbitrary<ByteString> value =
        Arbitraries.bytes().array(byte[].class).ofMaxSize(300).map(ByteString::copyFrom);
    Arbitrary<KeyWrite> keyWrite =
        Combinators.combine(name, value, Arbitraries.of(true, false))
            .as(
                (k, v, delete) ->
                    KeyWrite.newBuilder().setKey(k).setValue(v).setDelete(delete).build());
    Arbitrary<Request.Builder> command =
        Arbitraries.oneOf(
            Combinators.combine(name, name, number, name, number, number)
                .as(
                    (r, o, ttl, id, wait, delay) ->
                        Request.newBuilder()
                            .setAcquire(
                                AcquireRequest.newBuilder()
                                    .setResource(r)
                                    .setOwner(o)
                                    .setTtlMs(ttl)
                                    .setRequestId(id)
                                    .setWaitMs(wait)
                                    .setLockDelayMs(delay))),
            Combinators.combine(name, number, number)
                .as(
                    (r, t, ttl) ->
                        Request.newBuilder()
                            .setRenew(
                                RenewRequest.newBuilder()
                                    .setResource(r)
                                    .setToken(t)
                                    .setTtlMs(ttl))),
            Combinators.combine(name, number)
                .as(
                    (r, t) ->
                        Request.newBuilder()
                            .setRelease(ReleaseRequest.newBuilder().setResource(r).setToken(t))),
            Combinators.combine(name, number, keyWrite.list().ofMaxSize(8), name)
                .as(
                    (r, t, writes, id) ->
                        Request.newBuilder()
                            .setWrite(
                                WriteRequest.newBuilder()
                                    .setResource(r)
                                    .setToken(t)
                                    .addAllWrites(writes)
                                    .setRequestId(id))),
            Combinators.combine(name, name)
                .as(
                    (r, reason) ->
                        Request.newBuilder()
                            .setRevoke(
                                RevokeRequest.newBuilder().setResource(r).setReason(reason))),
            Combinators.combine(name, name)
                .as(
                    (r, id) ->
                        Request.newBuilder()
                            .setCancelWait(
                                CancelWaitRequest.newBuilder().setResource(r).setRequestId(id))),
            Combinators.combine(name, name)
                .as(
                    (r, k) ->
                        Request.newBuilder()
                            .setRead(ReadRequest.newBuilder().setResource(r).setKey(k))),
            name.map(r -> Request.newBuilder().setLease(LeaseQuery.newBuilder().setResource(r))),
            Combinators.combine(name, number)
                .as(
                    (r, t) ->
                        Request.newBuilder()
                            .setValidate(ValidateRequest.newBuilder().setResource(r).setToken(t))),
            Combinators.combine(name, name, name, smallInt)
                .as(
                    (r, prefix, after, limit) ->
                        Request.newBuilder()
                            .setList(
                                ListRequest.newBuilder()
                                    .setResource(r)
                                    .setPrefix(prefix)
                                    .setAfter(after)
                                    .setLimit(limit))),
            Combinators.combine(name, number, smallInt)
                .as(
                    (id, offset, max) ->
                        Request.newBuilder()
                            .setBackup(
                                BackupRequest.newBuilder()
                                    .setBackupId(id)
                                    .setOffset(offset)
                                    .setMaxBytes(max))),
            Arbitraries.just(Request.newBuilder()));
    // Batches of any of the above: the leader splits off the commands it refuses alone, logs the
    // rest.
    Arbitrary<Request.Builder> batch =
        command
            .list()
            .ofMaxSize(6)
            .map(
                commands -> {
                  BatchRequest.Builder b = BatchRequest.newBuilder();
                  commands.forEach(c -> b.addRequests(c.build()));
                  return Request.newBuilder().setBatch(b);
                });
    return Combinators.combine(
            Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(6, command), net.jqwik.api.Tuple.of(1, batch)),
            Arbitraries.oneOf(Arbitraries.of(CALLERS), hostileStrings()))
        .as((c, caller) -> c.setCaller(caller).build());
  }

  /**
   * Control characters, format characters (bidi overrides, zero-width spaces), surrogates,
   * non-Latin text, and lengths around and far beyond the limits.
   */
  private static Arbitrary<String> hostileStrings() {
    return Arbitraries.oneOf(
        Arbitraries.strings().all().ofMaxLength(40),
        Arbitraries.strings().withCharRange('\u0000', '\u001f').ofMaxLength(8),
        Arbitraries.strings()
            .withChars(
                'r', '1', '\u202E', '\u202D', '\u2066', '\u200B', '\u200D', '\uFEFF', '\u00AD')
            .ofMinLength(1)
            .ofMaxLength(8),
        Arbitraries.strings().alpha().ofMinLength(30).ofMaxLength(2_000));
  }

  /** Truncated, extended, or with bytes overwritten. */
  private static Arbitrary<byte[]> mutated(Arbitrary<byte[]> valid) {
    return Combinators.combine(
            valid,
            Arbitraries.integers().between(0, 3),
            Arbitraries.integers().between(0, 1 << 16),
            Arbitraries.bytes().array(byte[].class).ofMinSize(1).ofMaxSize(16))
        .as(
            (bytes, how, at, noise) -> {
              int pos = bytes.length == 0 ? 0 : at % bytes.length;
              return switch (how) {
                case 0 -> java.util.Arrays.copyOf(bytes, pos);
                case 1 -> concat(bytes, noise);
                case 2 -> {
                  byte[] copy = bytes.clone();
                  for (int i = 0; i < noise.length && pos + i < copy.length; i++) {
                    copy[pos + i] = noise[i];
                  }
                  yield copy;
                }
                default -> concat(java.util.Arrays.copyOf(bytes, pos), concat(noise, bytes));
              };
            });
  }

  /** An acquire whose resource field holds bytes that are not UTF-8. */
  private static Arbitrary<byte[]> invalidUtf8Names() {
    return Arbitraries.of(
            new byte[] {(byte) 0xff},
            new byte[] {(byte) 0xc3, 0x28},
            new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80},
            new byte[] {'r', (byte) 0x80, '1'})
        .map(
            name -> {
              byte[] acquire = field(AcquireRequest.RESOURCE_FIELD_NUMBER, name);
              return field(Request.ACQUIRE_FIELD_NUMBER, acquire);
            });
  }

  /** A listing whose kind is an enum number this build does not know. */
  private static Arbitrary<byte[]> unknownListKind() {
    return Arbitraries.integers()
        .between(2, Integer.MAX_VALUE)
        .map(
            kind ->
                Request.newBuilder()
                    .setList(ListRequest.newBuilder().setWhatValue(kind).setPrefix("r"))
                    .build()
                    .toByteArray());
  }

  private static byte[] field(int number, byte[] payload) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      CodedOutputStream out = CodedOutputStream.newInstance(bytes);
      out.writeByteArray(number, payload);
      out.flush();
      return bytes.toByteArray();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
