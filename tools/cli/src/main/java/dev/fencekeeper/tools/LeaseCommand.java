package dev.fencekeeper.tools;

import dev.fencekeeper.client.AcquireOptions;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.Durations;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.time.Duration;
import java.util.UUID;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code lease acquire|renew|release|show|validate}: one lease call each. */
@Command(
    name = "lease",
    mixinStandardHelpOptions = true,
    header = "Acquire, renew, release, show or validate a lease.",
    subcommands = {
      LeaseCommand.Acquire.class,
      LeaseCommand.Renew.class,
      LeaseCommand.Release.class,
      LeaseCommand.Show.class,
      LeaseCommand.Validate.class,
      LeaseCommand.Revoke.class,
      LeaseCommand.Hold.class,
      LeaseRunCommand.class,
    })
final class LeaseCommand implements Runnable {
  @CommandLine.Spec private CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(),
        "choose one of: acquire, renew, release, show, validate, revoke, hold, run");
  }

  @Command(
      name = "acquire",
      mixinStandardHelpOptions = true,
      header = "Take a lease; prints its fencing token.",
      description = {
        "Acquires <resource> unless another live lease holds it. With --wait, queues (first come,"
            + " first",
        "served) until the resource is free or the wait ends.",
        "Exit 0 GRANTED, 3 HELD (also when a wait ends), 16 LOCK_DELAYED."
      })
  static final class Acquire extends ClientVerb
      implements CallDeadline.PrintsTimeout, CallDeadline.Changes {
    @Parameters(index = "0", paramLabel = "<resource>")
    private String resource;

    @picocli.CommandLine.Mixin private AcquireFlags flags;

    @Option(
        names = "--request-id",
        paramLabel = "ID",
        description =
            "Idempotency key: retrying with the same id returns the same token, not a second"
                + " lease.")
    private String requestId;

    @Option(
        names = {"-q", "--quiet"},
        description =
            "Print only the token (for A=$(fencekeeper lease acquire ... -q)); a rejection goes to"
                + " stderr.")
    private boolean quiet;

    Acquire(CliContext context) {
      super(context);
    }

    @Override
    void checkOptions() {
      if (quiet && client.json()) {
        throw usageError("--quiet and --json exclude each other");
      }
    }

    @Override
    ResultView call(FencingClient fencing) {
      if (!flags.waits()) {
        // An id of its own when none is given: an acquire whose answer was lost is sent again as
        // the same acquire, and reports the lease it was granted, not a second one.
        AcquireOptions options =
            flags.options(requestId != null ? requestId : UUID.randomUUID().toString());
        return ResultView.ofLease(
            UntilAnswered.send(
                retryBudget(),
                () ->
                    fencing
                        .acquireTokenAsync(resource, flags.ttl, options)
                        .thenApply(Wire::response),
                fencing::clusterUnreachable),
            resource);
      }
      AcquireOptions options = flags.options(requestId);
      try {
        Lease granted = fencing.acquire(resource, flags.ttl, flags.wait, options);
        // This process exits right away: the lease is the caller's to renew or release by token.
        granted.abandon();
        Response shown =
            Wire.response(fencing.lease(resource)).toBuilder()
                .setCode(ResultCode.GRANTED)
                .setToken(granted.token())
                .build();
        return ResultView.ofLease(shown, resource);
      } catch (FencingException e) {
        Response r = Wire.response(e.result());
        if (r.getCode() == ResultCode.WAITING) {
          r =
              r.toBuilder()
                  .setCode(ResultCode.HELD)
                  .setMessage("still held after waiting " + Durations.format(flags.wait))
                  .build();
        }
        return ResultView.ofLease(r, resource);
      }
    }

    @Override
    public int printTimeout(Report report, CliContext direct) {
      if (!quiet) {
        return report.print(direct, client.json());
      }
      report.lines().forEach(direct.err()::println);
      direct.err().flush();
      return report.exit().code();
    }

    @Override
    int print(ResultView view) {
      if (!quiet) {
        return super.print(view);
      }
      if (view.exitCode() == ExitCode.SUCCESS) {
        context.out().println(view.response().getToken());
        context.out().flush();
      } else {
        // stdout stays empty, so a script capturing the token gets nothing rather than a sentence.
        context.err().println(view.humanLine());
        context.err().flush();
      }
      return view.exitCode().code();
    }
  }

  @Command(
      name = "renew",
      mixinStandardHelpOptions = true,
      header = "Extend a live lease.",
      description = {
        "Extends the live lease <token> on <resource>.",
        "Exit 0 RENEWED, 4 LEASE_LOST."
      })
  static final class Renew extends ClientVerb implements CallDeadline.Changes {
    @Parameters(index = "0", paramLabel = "<resource>")
    private String resource;

    @Parameters(index = "1", paramLabel = "<token>", converter = TokenConverter.class)
    private long token;

    @Option(
        names = "--ttl",
        paramLabel = "DURATION",
        converter = DurationConverter.class,
        description = "New time to live. Default: the lease's own TTL.")
    private Duration ttl;

    Renew(CliContext context) {
      super(context);
    }

    @Override
    ResultView call(FencingClient fencing) {
      return ResultView.ofLease(Wire.response(fencing.renew(resource, token, ttl)), resource);
    }
  }

  @Command(
      name = "release",
      mixinStandardHelpOptions = true,
      header = "End a lease.",
      description = {
        "Ends lease <token> on <resource>; releasing an already ended lease says so and succeeds.",
        "Exit 0 RELEASED, 5 NOT_HOLDER."
      })
  static final class Release extends ClientVerb implements CallDeadline.Changes {
    @Parameters(index = "0", paramLabel = "<resource>")
    private String resource;

    @Parameters(index = "1", paramLabel = "<token>", converter = TokenConverter.class)
    private long token;

    Release(CliContext context) {
      super(context);
    }

    @Override
    ResultView call(FencingClient fencing) {
      return ResultView.ofLease(Wire.response(fencing.release(resource, token)), resource);
    }
  }

  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      header = "Show who holds a resource.",
      description = {
        "Shows the live lease on <resource> (holder token, owner, expiry) and its newest token.",
        "Exit 0 FOUND, 10 NOT_FOUND (never leased)."
      })
  static final class Show extends ClientVerb {
    @Parameters(index = "0", paramLabel = "<resource>")
    private String resource;

    Show(CliContext context) {
      super(context);
    }

    @Override
    ResultView call(FencingClient fencing) {
      return ResultView.ofLeaseQuery(Wire.response(fencing.lease(resource)), resource);
    }
  }

  @Command(
      name = "validate",
      mixinStandardHelpOptions = true,
      header = "Check a token, to fence writes elsewhere.",
      description = {
        "Checks whether <token> is the live lease on <resource>, for services that fence their own"
            + " writes.",
        "Exit 0 CURRENT, 13 STALE, 14 EXPIRED, 8 UNKNOWN_TOKEN."
      })
  static final class Validate extends ClientVerb {
    @Parameters(index = "0", paramLabel = "<resource>")
    private String resource;

    @Parameters(index = "1", paramLabel = "<token>", converter = TokenConverter.class)
    private long token;

    Validate(CliContext context) {
      super(context);
    }

    @Override
    ResultView call(FencingClient fencing) {
      return ResultView.ofLease(Wire.response(fencing.validate(resource, token)), resource);
    }
  }

  @Command(
      name = "revoke",
      mixinStandardHelpOptions = true,
      header = "Evict the holder of a resource.",
      description = {
        "Ends the live lease on <resource> whoever holds it. The holder's later writes are rejected"
            + " and its",
        "client is told; a lock-delay it asked for starts now.",
        "Exit 0 REVOKED, 10 NOT_FOUND (no live lease)."
      })
  static final class Revoke extends ClientVerb
      implements ClientOptions.AdminOperation, CallDeadline.Changes {
    @Parameters(index = "0", paramLabel = "<resource>")
    private String resource;

    @Option(names = "--reason", paramLabel = "TEXT", description = "Why, for the record.")
    private String reason;

    Revoke(CliContext context) {
      super(context);
    }

    @Override
    ResultView call(FencingClient fencing) {
      return ResultView.ofLease(Wire.response(fencing.revoke(resource, reason)), resource);
    }
  }

  @Command(
      name = "hold",
      mixinStandardHelpOptions = true,
      header = "Take a lease and keep renewing it until stopped.",
      description = {
        "Acquires <resource> (waiting with --wait), prints `HOLDING <resource> token=N`, and renews"
            + " the lease",
        "about every TTL/3 until stopped. Ctrl-C or SIGTERM releases it; kill -9 leaves it to"
            + " expire — a",
        "worker that dies. Exit 0 when stopped, 3 HELD, 4 when the lease is lost (expired,"
            + " revoked)."
      })
  static final class Hold implements java.util.concurrent.Callable<Integer> {
    private final CliContext context;

    @picocli.CommandLine.Mixin private ClientOptions client;

    @Parameters(index = "0", paramLabel = "<resource>")
    private String resource;

    @picocli.CommandLine.Mixin private AcquireFlags flags;

    @Option(
        names = "--timeout",
        paramLabel = "DURATION",
        converter = DurationConverter.class,
        description = "Give up acquiring after this long (--wait included): UNAVAILABLE, exit 11.")
    private Duration timeout;

    Hold(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() throws InterruptedException {
      java.util.concurrent.CompletableFuture<Integer> ended =
          new java.util.concurrent.CompletableFuture<>();
      try (FencingClient fencing = client.connect()) {
        HeldLeaseAcquisition acquired =
            HeldLeaseAcquisition.acquire(fencing, resource, flags, timeout);
        if (!acquired.granted()) {
          ResultView view = ResultView.ofLease(acquired.refusal(), resource);
          context.err().println(view.humanLine());
          return view.exitCode().code();
        }
        Lease lease = acquired.lease();
        context.out().println("HOLDING " + resource + " token=" + lease.token());
        context.out().flush();
        lease.onLost(
            reason -> {
              context.err().println("LOST " + resource + " token=" + lease.token() + ": " + reason);
              ended.complete(ExitCode.of(ResultCode.LEASE_LOST).code());
            });
        Thread releaseOnStop =
            new Thread(
                () -> {
                  lease.close();
                  ended.complete(ExitCode.SUCCESS.code());
                },
                "release-on-stop");
        Runtime.getRuntime().addShutdownHook(releaseOnStop);
        try {
          return ended.get();
        } catch (java.util.concurrent.ExecutionException e) {
          throw new IllegalStateException(e.getCause());
        }
      }
    }
  }
}
