package dev.fencekeeper.tools;

import dev.fencekeeper.proto.ResultCode;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The one mapping from outcomes to process exit codes: one code per kind of rejection, so a script
 * can branch on {@code $?} without parsing output. {@code --help} prints this table and a test
 * holds docs/cli.md's copy to it word for word; never hard-code these numbers elsewhere.
 */
public enum ExitCode {
  SUCCESS(0, "success: GRANTED, RENEWED, RELEASED, ACCEPTED, FOUND, CURRENT, REVOKED"),
  UNEXPECTED(1, "unexpected error in the tool itself (stack trace on stderr)"),
  USAGE(2, "usage error (bad flag or flag value) or bad config file, port in use"),
  HELD(3, "HELD: another live lease holds the resource"),
  LEASE_LOST(4, "LEASE_LOST: renew of a token that is no longer the live lease"),
  NOT_HOLDER(5, "NOT_HOLDER: release of a token that is not the resource's lease"),
  STALE_TOKEN(6, "STALE_TOKEN: write rejected, a newer token exists"),
  LEASE_EXPIRED(7, "LEASE_EXPIRED: write rejected, the lease ended (no newer token)"),
  UNKNOWN_TOKEN(8, "UNKNOWN_TOKEN: the token was never issued for the resource"),
  INVALID_ARGUMENT(9, "INVALID_ARGUMENT: input outside the cluster's limits (sizes, TTL bounds)"),
  NOT_FOUND(10, "NOT_FOUND: no such key, or the resource was never leased"),
  UNAVAILABLE(11, "UNAVAILABLE: no node answered; status: no leader; up: all nodes exited"),
  INTERNAL(12, "INTERNAL: a node failed to answer"),
  STALE(13, "STALE (validate): a newer token has been issued"),
  EXPIRED(14, "EXPIRED (validate): the lease has ended"),
  WAITING(15, "WAITING: queued behind the holder; not granted (yet)"),
  LOCK_DELAYED(16, "LOCK_DELAYED: free, but the lock-delay after an involuntary end runs"),
  COMPACTED(17, "COMPACTED (watch): the events asked for are no longer kept"),
  CHECK_FAILED(18, "CHECK_FAILED: a drill's or the bench's checker found a violation"),
  PERMISSION_DENIED(19, "PERMISSION_DENIED: admin only, not your lease, or TLS handshake refused"),
  OVERLOADED(20, "OVERLOADED: too many requests pending; nothing applied, retry later"),
  RUN_LEASE_LOST(21, "lease run: the lease was lost while the command ran, so it was stopped"),
  STORAGE_FULL(22, "server: disk below the 64 MiB reserve; free space, then start it again"),
  NOT_THIS_CLUSTER(23, "server: storage lost or another cluster's; status: nodes of 2 clusters");

  private static final Map<ResultCode, ExitCode> BY_RESULT = new EnumMap<>(ResultCode.class);

  static {
    for (ResultCode code : ResultCode.values()) {
      BY_RESULT.put(code, deliberateMapping(code).orElse(INTERNAL));
    }
  }

  private final int code;
  private final String meaning;

  ExitCode(int code, String meaning) {
    this.code = code;
    this.meaning = meaning;
  }

  public int code() {
    return code;
  }

  public String meaning() {
    return meaning;
  }

  /**
   * The exit code for a client call's outcome (the same table: the client's codes mirror the
   * wire's).
   */
  public static ExitCode of(dev.fencekeeper.client.ResultCode result) {
    return of(ResultCode.valueOf(result.name()));
  }

  /** The exit code for a cluster answer; a code without a deliberate mapping counts as INTERNAL. */
  public static ExitCode of(ResultCode result) {
    return BY_RESULT.get(result);
  }

  /**
   * The exit code chosen for {@code result}, if one was. A result code added to fencing.proto later
   * has none until someone decides it here (ExitCodeTest fails until then); meanwhile it exits as
   * INTERNAL rather than failing the build of every module that adds one.
   */
  static Optional<ExitCode> deliberateMapping(ResultCode result) {
    return Optional.ofNullable(
        switch (result) {
          case GRANTED, RENEWED, RELEASED, ACCEPTED, FOUND, CURRENT, REVOKED -> SUCCESS;
          case WAITING -> WAITING;
          case HELD -> HELD;
          case LOCK_DELAYED -> LOCK_DELAYED;
          case LEASE_LOST -> LEASE_LOST;
          case NOT_HOLDER -> NOT_HOLDER;
          case STALE_TOKEN -> STALE_TOKEN;
          case LEASE_EXPIRED -> LEASE_EXPIRED;
          case UNKNOWN_TOKEN -> UNKNOWN_TOKEN;
          case INVALID_ARGUMENT -> INVALID_ARGUMENT;
          case NOT_FOUND -> NOT_FOUND;
          // The client follows NOT_LEADER to the leader; one that reaches the CLI means no leader
          // answered in time.
          case UNAVAILABLE, NOT_LEADER -> UNAVAILABLE;
          case STALE -> STALE;
          case EXPIRED -> EXPIRED;
          case COMPACTED -> COMPACTED;
          case PERMISSION_DENIED -> PERMISSION_DENIED;
          case OVERLOADED -> OVERLOADED;
          // A reply without a code, or with one newer than this build's fencing.proto, is not an
          // answer we can act on: the node failed to give one.
          case INTERNAL, RESULT_CODE_UNSPECIFIED, UNRECOGNIZED -> INTERNAL;
          // The CLI sends no batches (only FencingClient coalesces), so a batch envelope is not its
          // answer.
          case BATCH_ANSWERED -> INTERNAL;
          default -> null;
        });
  }

  /** The table shown at the end of {@code --help}: one line per code. */
  static String helpTable() {
    return Arrays.stream(values())
        .map(e -> String.format("  %2d  %s", e.code, e.meaning))
        .collect(Collectors.joining("%n"));
  }
}
