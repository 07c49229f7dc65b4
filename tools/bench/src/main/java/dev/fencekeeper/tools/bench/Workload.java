package dev.fencekeeper.tools.bench;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.ReadConsistency;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.WriteResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The bench's workloads. Each worker runs its own loop of {@link Worker#step} against its own
 * resources (except W6, whose workers share a few); the runner times every step.
 */
enum Workload {
  W1(
      "lock churn",
      "acquire, one fenced write, release on the worker's own resource (Lease API: `acquire`,"
          + " `lease.write`, `lease.close`; raw token: `acquireToken`, `write(resource, token,"
          + " ...)`, `release`)",
      "cycles",
      ClientApi.LEASE,
      ClientApi.RAW),
  W2(
      "fenced writes",
      "each worker holds a lease and writes 100 bytes with its token in a loop (Lease API: a"
          + " self-renewing lease of TTL 10 s and `lease.write`; raw token: one long-TTL"
          + " `acquireToken` and `write(resource, token, ...)`)",
      "writes",
      ClientApi.LEASE,
      ClientApi.RAW),
  W3(
      "stale replay",
      "A acquires and releases, B acquires, A's write with the old token must be rejected"
          + " (only that write is timed; Lease API: A's closed lease writes)",
      "stale writes",
      ClientApi.LEASE,
      ClientApi.RAW),
  W4(
      "linearizable reads",
      "each worker reads its own key, linearizable: on the leader after its read barrier"
          + " (`client.read`, no lease)",
      "reads",
      ClientApi.RAW),
  W5(
      "renew storm",
      "--leases leases (1000 unless given) of TTL 3 s spread over the workers, each renewed every"
          + " TTL/3 by token (`client.renew`). A worker renews one lease at a time, so one that"
          + " cannot get through its share within the TTL (a single worker with 1,000 leases needs"
          + " a renewal every 3 ms) sees leases expire and those renewals fail: the client's pace,"
          + " not the service's",
      "renewals",
      ClientApi.RAW),
  W6(
      "contended lock",
      "blocking acquire (queued, FIFO) of one of concurrency/16 shared resources, one"
          + " fenced write, release (Lease API only: the client has no token-level blocking"
          + " acquire)",
      "grants",
      ClientApi.LEASE);

  /**
   * The TTL of the Lease API's leases: they renew themselves at a third of it, as an application's
   * would.
   */
  static final Duration LEASE_TTL = Duration.ofSeconds(10);

  static final Duration W5_TTL = Duration.ofSeconds(3);
  static final byte[] VALUE = new byte[100];

  /**
   * W6's longest wait in line; the runner waits this long for the last steps after a window ends.
   */
  static final Duration CONTENDED_WAIT = Duration.ofSeconds(20);

  final String title;
  final String description;
  final String unit;

  /** The client paths this workload can drive, the one it drives by default first. */
  final List<ClientApi> apis;

  Workload(String title, String description, String unit, ClientApi... apis) {
    this.title = title;
    this.description = description;
    this.unit = unit;
    this.apis = List.of(apis);
  }

  /** More than one path: its rows say which one they measured. */
  boolean hasPathChoice() {
    return apis.size() > 1;
  }

  /**
   * The paths of {@code chosen} (--api, in its order) this workload runs: those it has, or its only
   * one when it has none of them.
   */
  List<ClientApi> pathsFor(List<ClientApi> chosen) {
    List<ClientApi> paths = chosen.stream().filter(apis::contains).toList();
    return paths.isEmpty() ? List.of(apis.get(0)) : paths;
  }

  static List<Workload> parse(String list) {
    List<Workload> chosen = new ArrayList<>();
    for (String name : list.split(",")) {
      String n = name.trim().toUpperCase(Locale.ROOT);
      if (n.equals("ALL")) {
        return Arrays.asList(values());
      }
      if (n.equals("NONE") && list.trim().equalsIgnoreCase("none")) {
        return List.of();
      }
      chosen.add(valueOf(n));
    }
    return chosen;
  }

  /**
   * What one worker does; {@code step} is the timed operation, {@code prepare} untimed work before
   * it.
   */
  interface Worker {
    default void setUp() {}

    /**
     * Untimed work before each step; returns nanoseconds to wait before the step is due (0: now).
     */
    default long prepare() {
      return 0;
    }

    Step step();

    default void tearDown() {}
  }

  /**
   * How a step ended, and for a failure, why (the result code, usually). STALE_ACCEPTED fails the
   * bench: it is the one thing fencekeeper exists to prevent.
   */
  record Step(Kind kind, String reason) {
    enum Kind {
      OK,
      FAILED,
      STALE_ACCEPTED
    }

    static final Step OK = new Step(Kind.OK, "");
    static final Step STALE_ACCEPTED = new Step(Kind.STALE_ACCEPTED, "stale write ACCEPTED");

    static Step failed(String reason) {
      return new Step(Kind.FAILED, reason);
    }

    static Step expect(ResultCode wanted, ResultCode got) {
      return got == wanted ? OK : failed(got.name());
    }
  }

  /**
   * A worker of this workload, number {@code index} of {@code concurrency}, in run {@code runId},
   * on the workload's default path.
   */
  Worker worker(
      FencingClient client,
      String runId,
      int index,
      int concurrency,
      int leases,
      Duration leaseTtl) {
    return worker(client, runId, index, concurrency, leases, leaseTtl, apis.get(0));
  }

  /**
   * A worker of this workload on path {@code api} (one of {@link #apis}). {@code leaseTtl} is the
   * raw path's lease TTL: nothing renews those leases, so it outlasts the run.
   */
  Worker worker(
      FencingClient client,
      String runId,
      int index,
      int concurrency,
      int leases,
      Duration leaseTtl,
      ClientApi api) {
    if (!apis.contains(api)) {
      throw new IllegalArgumentException(this + " has no " + api.label + " path");
    }
    // Per concurrency and path too: a run never meets the leases an earlier run of the same
    // workload left behind.
    String resource =
        "bench/"
            + runId
            + "/"
            + name().toLowerCase(Locale.ROOT)
            + (hasPathChoice() ? "-" + api.label : "")
            + "/c"
            + concurrency
            + "/"
            + index;
    boolean lease = api == ClientApi.LEASE;
    return switch (this) {
      case W1 -> lease ? new LeaseChurn(client, resource) : new LockChurn(client, resource);
      case W2 ->
          lease
              ? new LeaseFencedWrites(client, resource)
              : new FencedWrites(client, resource, leaseTtl);
      case W3 -> lease ? new LeaseStaleReplay(client, resource) : new StaleReplay(client, resource);
      case W4 -> new Reads(client, resource, leaseTtl);
      case W5 -> new RenewStorm(client, resource, Math.max(1, leases / concurrency));
      case W6 ->
          new Contended(
              client,
              "bench/"
                  + runId
                  + "/w6/c"
                  + concurrency
                  + "/"
                  + index % Math.max(1, (concurrency + 15) / 16));
    };
  }

  private static final class LockChurn implements Worker {
    private final FencingClient client;
    private final String resource;

    LockChurn(FencingClient client, String resource) {
      this.client = client;
      this.resource = resource;
    }

    @Override
    public Step step() {
      Result acquired = client.acquireToken(resource, Duration.ofSeconds(10), "bench-w1");
      if (acquired.code() != ResultCode.GRANTED) {
        return Step.failed("acquire " + acquired.code());
      }
      WriteResult written = client.write(resource, acquired.token(), "k", VALUE);
      Result released = client.release(resource, acquired.token());
      if (!written.isAccepted()) {
        return Step.failed("write " + written.code());
      }
      return Step.expect(ResultCode.RELEASED, released.code());
    }
  }

  private static final class FencedWrites implements Worker {
    private final FencingClient client;
    private final String resource;
    private final Duration ttl;
    private long token;

    FencedWrites(FencingClient client, String resource, Duration ttl) {
      this.client = client;
      this.resource = resource;
      this.ttl = ttl;
    }

    @Override
    public void setUp() {
      token = acquireOrThrow(client, resource, ttl);
    }

    @Override
    public Step step() {
      return Step.expect(ResultCode.ACCEPTED, client.write(resource, token, "k", VALUE).code());
    }

    @Override
    public void tearDown() {
      client.release(resource, token);
    }
  }

  private static final class StaleReplay implements Worker {
    private final FencingClient client;
    private final String resource;
    private long staleToken;
    private long newerToken;

    StaleReplay(FencingClient client, String resource) {
      this.client = client;
      this.resource = resource;
    }

    @Override
    public long prepare() {
      if (newerToken != 0) {
        client.release(resource, newerToken);
      }
      staleToken = acquireOrThrow(client, resource, Duration.ofSeconds(10));
      client.release(resource, staleToken);
      newerToken = acquireOrThrow(client, resource, Duration.ofSeconds(10));
      return 0;
    }

    @Override
    public Step step() {
      WriteResult r = client.write(resource, staleToken, "k", VALUE);
      if (r.isAccepted()) {
        return Step.STALE_ACCEPTED;
      }
      // Anything but a definite STALE_TOKEN (a timeout: outcome unknown) does not count as
      // rejected.
      if (r.code() == ResultCode.STALE_TOKEN && r.currentToken() != newerToken) {
        return Step.failed(
            "STALE_TOKEN naming token " + r.currentToken() + ", not the newer " + newerToken);
      }
      return Step.expect(ResultCode.STALE_TOKEN, r.code());
    }

    @Override
    public void tearDown() {
      if (newerToken != 0) {
        client.release(resource, newerToken);
      }
    }
  }

  private static final class Reads implements Worker {
    private final FencingClient client;
    private final String resource;
    private final Duration ttl;

    Reads(FencingClient client, String resource, Duration ttl) {
      this.client = client;
      this.resource = resource;
      this.ttl = ttl;
    }

    @Override
    public void setUp() {
      long token = acquireOrThrow(client, resource, ttl);
      if (!client.write(resource, token, "k", VALUE).isAccepted()) {
        throw new IllegalStateException("W4 set-up write to " + resource + " was not accepted");
      }
      client.release(resource, token);
    }

    @Override
    public Step step() {
      return Step.expect(
          ResultCode.FOUND, client.read(resource, "k", ReadConsistency.LINEARIZABLE).code());
    }
  }

  /**
   * Renews its leases round-robin, each once per TTL/3 counted from its previous renewal's send.
   */
  private static final class RenewStorm implements Worker {
    private final FencingClient client;
    private final String prefix;
    private final long[] tokens;
    private final long[] dueNanos;
    private int next;

    RenewStorm(FencingClient client, String prefix, int leases) {
      this.client = client;
      this.prefix = prefix;
      this.tokens = new long[leases];
      this.dueNanos = new long[leases];
    }

    // Taken with a long TTL, so that a slow set-up of many leases loses none before the storm
    // starts; the first renewal sets the storm's TTL.
    @Override
    public void setUp() {
      long now = System.nanoTime();
      for (int i = 0; i < tokens.length; i++) {
        tokens[i] = acquireOrThrow(client, prefix + "/" + i, Duration.ofMinutes(10));
        dueNanos[i] = now;
      }
    }

    @Override
    public long prepare() {
      return Math.max(0, dueNanos[next] - System.nanoTime());
    }

    @Override
    public Step step() {
      int i = next;
      next = (next + 1) % tokens.length;
      dueNanos[i] = System.nanoTime() + W5_TTL.toNanos() / 3;
      return Step.expect(
          ResultCode.RENEWED, client.renew(prefix + "/" + i, tokens[i], W5_TTL).code());
    }

    @Override
    public void tearDown() {
      for (int i = 0; i < tokens.length; i++) {
        client.release(prefix + "/" + i, tokens[i]);
      }
    }
  }

  private static final class LeaseChurn implements Worker {
    private final FencingClient client;
    private final String resource;

    LeaseChurn(FencingClient client, String resource) {
      this.client = client;
      this.resource = resource;
    }

    @Override
    public Step step() {
      Lease lease;
      try {
        lease = client.acquire(resource, LEASE_TTL, "bench-w1");
      } catch (RuntimeException e) {
        return Step.failed("acquire " + e.getClass().getSimpleName());
      }
      try (lease) {
        WriteResult written = lease.write("k", VALUE);
        return written.isAccepted() ? Step.OK : Step.failed("write " + written.code());
      }
    }
  }

  private static final class LeaseFencedWrites implements Worker {
    private final FencingClient client;
    private final String resource;
    private Lease lease;

    LeaseFencedWrites(FencingClient client, String resource) {
      this.client = client;
      this.resource = resource;
    }

    @Override
    public void setUp() {
      lease = client.acquire(resource, LEASE_TTL, "bench");
    }

    @Override
    public Step step() {
      return Step.expect(ResultCode.ACCEPTED, lease.write("k", VALUE).code());
    }

    @Override
    public void tearDown() {
      lease.close();
    }
  }

  /**
   * W3 through leases: A's lease is closed (released) before B's is granted, and A's write still
   * goes to the cluster with A's token: a closed lease does not stop its holder from writing, the
   * token check does.
   */
  private static final class LeaseStaleReplay implements Worker {
    private final FencingClient client;
    private final String resource;
    private Lease stale;
    private Lease newer;

    LeaseStaleReplay(FencingClient client, String resource) {
      this.client = client;
      this.resource = resource;
    }

    @Override
    public long prepare() {
      if (newer != null) {
        newer.close();
        newer = null;
      }
      stale = client.acquire(resource, LEASE_TTL, "bench");
      stale.close();
      newer = client.acquire(resource, LEASE_TTL, "bench");
      return 0;
    }

    @Override
    public Step step() {
      WriteResult r = stale.write("k", VALUE);
      if (r.isAccepted()) {
        return Step.STALE_ACCEPTED;
      }
      if (r.code() == ResultCode.STALE_TOKEN && r.currentToken() != newer.token()) {
        return Step.failed(
            "STALE_TOKEN naming token " + r.currentToken() + ", not the newer " + newer.token());
      }
      return Step.expect(ResultCode.STALE_TOKEN, r.code());
    }

    @Override
    public void tearDown() {
      if (newer != null) {
        newer.close();
      }
    }
  }

  private static final class Contended implements Worker {
    private final FencingClient client;
    private final String resource;

    Contended(FencingClient client, String resource) {
      this.client = client;
      this.resource = resource;
    }

    @Override
    public Step step() {
      try (Lease lease = client.acquire(resource, Duration.ofSeconds(10), CONTENDED_WAIT)) {
        return Step.expect(ResultCode.ACCEPTED, lease.write("k", VALUE).code());
      } catch (RuntimeException e) {
        return Step.failed(
            "acquire: " + e.getClass().getSimpleName()); // the wait ran out, or no node answered
      }
    }
  }

  static long acquireOrThrow(FencingClient client, String resource, Duration ttl) {
    Result r = client.acquireToken(resource, ttl, "bench");
    if (r.code() != ResultCode.GRANTED) {
      // The reason comes first, so failures of many resources count under one key (see Runner).
      throw new IllegalStateException("acquire " + r.code() + " for " + resource + ": " + r);
    }
    return r.token();
  }
}
