package dev.fencekeeper.core;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;

/** The commands that go through the Raft log. Each one is applied by {@link FencingState#apply}. */
public sealed interface Command {

  /**
   * Grant a lease on {@code resource} if nobody holds a live one and nobody waits ahead. A
   * non-empty {@code requestId} makes a retry return the same lease; {@code waitMs > 0} queues the
   * request behind the holder (re-send it with the same id to stay queued); {@code lockDelayMs}
   * keeps the resource ungrantable for that long after this lease ends involuntarily (expiry or
   * revoke). A non-empty {@code sessionId} puts the lease (and the waiter) in that session: its
   * keep-alives renew it ({@link RenewSession}) and its events name it.
   */
  record Acquire(
      String resource,
      String owner,
      long ttlMs,
      String requestId,
      long waitMs,
      long lockDelayMs,
      String caller,
      String sessionId)
      implements Command {
    public Acquire {
      requestId = requestId == null ? "" : requestId;
      caller = caller == null ? "" : caller;
      sessionId = sessionId == null ? "" : sessionId;
    }

    public Acquire(
        String resource,
        String owner,
        long ttlMs,
        String requestId,
        long waitMs,
        long lockDelayMs,
        String caller) {
      this(resource, owner, ttlMs, requestId, waitMs, lockDelayMs, caller, "");
    }

    public Acquire(
        String resource,
        String owner,
        long ttlMs,
        String requestId,
        long waitMs,
        long lockDelayMs) {
      this(resource, owner, ttlMs, requestId, waitMs, lockDelayMs, "");
    }

    public Acquire(String resource, String owner, long ttlMs) {
      this(resource, owner, ttlMs, "", 0, 0);
    }
  }

  /** The queued acquire {@code requestId} gives up its place; only its own caller may ask. */
  record CancelWait(String resource, String requestId, String caller) implements Command {
    public CancelWait {
      caller = caller == null ? "" : caller;
    }

    public CancelWait(String resource, String requestId) {
      this(resource, requestId, "");
    }
  }

  /**
   * Renews every live lease of session {@code sessionId} that {@code caller} may renew, each by its
   * own TTL, except those whose token is in {@code exceptTokens} (leases the client gave up and
   * lets run out). The session's keep-alive: one command for all of its leases.
   */
  record RenewSession(String sessionId, Set<Long> exceptTokens, String caller) implements Command {
    public RenewSession {
      exceptTokens = Set.copyOf(exceptTokens);
      caller = caller == null ? "" : caller;
    }

    public RenewSession(String sessionId, String caller) {
      this(sessionId, Set.of(), caller);
    }
  }

  /** An operator ends the live lease of {@code resource}, whoever holds it. */
  record Revoke(String resource, String reason) implements Command {}

  /**
   * Extend the live lease {@code token}; {@code ttlMs == 0} keeps the lease's own TTL. {@code
   * caller} is the identity that sent it (see {@link LeaseRecord#identity}).
   */
  record Renew(String resource, long token, long ttlMs, String caller) implements Command {
    public Renew {
      caller = caller == null ? "" : caller;
    }

    public Renew(String resource, long token, long ttlMs) {
      this(resource, token, ttlMs, "");
    }
  }

  /** End the live lease {@code token}. Idempotent: an already-ended lease answers so. */
  record Release(String resource, long token, String caller) implements Command {
    public Release {
      caller = caller == null ? "" : caller;
    }

    public Release(String resource, long token) {
      this(resource, token, "");
    }
  }

  /**
   * Change several keys of {@code resource} atomically, fenced by {@code token}. A non-empty {@code
   * requestId} makes a retry under the same lease return the first outcome instead of applying
   * again.
   */
  record Write(String resource, long token, List<KeyWrite> writes, String requestId, String caller)
      implements Command {
    public Write {
      writes = List.copyOf(writes);
      requestId = requestId == null ? "" : requestId;
      caller = caller == null ? "" : caller;
    }

    public Write(String resource, long token, List<KeyWrite> writes, String requestId) {
      this(resource, token, writes, requestId, "");
    }
  }

  /**
   * Committed by every new leader before it serves: gives each lease that was live at the last
   * known state-machine time a short grace, so an election never costs a renewing holder its lease.
   *
   * <p>It also names the leader's {@link FencingState#lineage() lineage}, so a replica that applies
   * the log onto a different starting state (a member added to a restored cluster without the seed)
   * stops at the first takeover instead of diverging. Empty in entries written before lineages
   * existed.
   */
  record Takeover(OptionalLong lineage) implements Command {
    public Takeover {
      Objects.requireNonNull(lineage, "lineage");
    }

    public Takeover() {
      this(OptionalLong.empty());
    }

    public static Takeover from(long lineage) {
      return new Takeover(OptionalLong.of(lineage));
    }
  }

  /** Advances state-machine time only; the leader commits one when a lease falls due. */
  record Tick() implements Command {}

  /**
   * Several client commands in one log entry, applied by {@link FencingState#applyBatch} one after
   * the other at the entry's time, each answered as if it had been sent alone. Lets a client put
   * many concurrent requests through one Raft round. Only {@link #isBatchable batchable} commands
   * may be in one.
   */
  record Batch(List<Command> commands) implements Command {
    public Batch {
      commands = List.copyOf(commands);
    }

    /**
     * Acquire, renew, release, write, cancel-wait and session renewals: the commands any client
     * sends at a high rate, each judged on its own. Revoke needs an admin check before it is
     * logged; takeovers and ticks are the leader's own; and a batch in a batch would only make the
     * limits harder to state.
     */
    public static boolean isBatchable(Command command) {
      return command instanceof Acquire
          || command instanceof Renew
          || command instanceof Release
          || command instanceof Write
          || command instanceof CancelWait
          || command instanceof RenewSession;
    }
  }

  /** One key of a {@link Write}: a new value, or a delete. */
  record KeyWrite(String key, byte[] value, boolean delete) {
    public KeyWrite {
      value = value == null ? new byte[0] : value;
    }

    public static KeyWrite put(String key, byte[] value) {
      return new KeyWrite(key, value, false);
    }

    public static KeyWrite delete(String key) {
      return new KeyWrite(key, new byte[0], true);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof KeyWrite k
          && k.key.equals(key)
          && k.delete == delete
          && Arrays.equals(k.value, value);
    }

    @Override
    public int hashCode() {
      return 31 * (31 * key.hashCode() + Arrays.hashCode(value)) + Boolean.hashCode(delete);
    }

    @Override
    public String toString() {
      return delete ? "delete(" + key + ")" : "put(" + key + ", " + value.length + " bytes)";
    }
  }
}
