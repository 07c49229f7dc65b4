package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Watch;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.proto.LeaseEvent;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code watch}: lease events of a resource or prefix, one line (or JSON object) each, in commit
 * order.
 */
@Command(
    name = "watch",
    mixinStandardHelpOptions = true,
    header = "Follow lease events.",
    description = {
      "Prints acquired / renewed / released / expired / revoked events of <name> (or of every"
          + " resource",
      "starting with it, with --prefix) in commit order, each with its log index: resume with"
          + " --after.",
      "Exit 0 when --count events or --timeout passed, 17 COMPACTED when --after is too old."
    })
final class WatchCommand implements Callable<Integer> {
  private final CliContext context;

  @Mixin private ClientOptions client;

  @Parameters(index = "0", paramLabel = "<name>")
  private String name;

  @Option(names = "--prefix", description = "Watch every resource whose name starts with <name>.")
  private boolean prefix;

  @Option(
      names = "--after",
      paramLabel = "INDEX",
      description =
          "Start after this log index (the `index` of the last event seen). Default: from now.")
  private Long after;

  @Option(
      names = "--count",
      paramLabel = "N",
      description = "Stop after N events. Default: run until Ctrl-C.")
  private Integer count;

  @Option(
      names = "--timeout",
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "Stop after this long.")
  private Duration timeout;

  WatchCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    CountDownLatch done = new CountDownLatch(1);
    AtomicInteger seen = new AtomicInteger();
    AtomicInteger exit = new AtomicInteger(ExitCode.SUCCESS.code());
    try (FencingClient fencing = client.connect();
        Watch watch =
            Wire.watch(
                fencing,
                name,
                prefix,
                after == null ? Watch.FROM_NOW : after,
                event -> {
                  print(event);
                  if (count != null && seen.incrementAndGet() >= count) {
                    done.countDown();
                  }
                })) {
      watch.onCompacted(
          r -> {
            context.err().println("COMPACTED: " + r.message());
            exit.set(ExitCode.of(r.code()).code());
            done.countDown();
          });
      if (timeout == null) {
        done.await();
      } else {
        done.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return exit.get();
  }

  private synchronized void print(LeaseEvent e) {
    if (client.json()) {
      Json.print(
          context.out(),
          Json.object()
              .put("index", e.getIndex())
              .put("seq", e.getSeq())
              .put("event", e.getType().name())
              .put("resource", e.getResource())
              .put("token", e.getToken())
              .put("owner", e.getOwner())
              .put("expiresAtMs", e.getExpiresAtMs())
              .put("atMs", e.getAtMs()));
    } else {
      context
          .out()
          .println(
              e.getIndex()
                  + "."
                  + e.getSeq()
                  + " "
                  + e.getType()
                  + " "
                  + e.getResource()
                  + " token="
                  + e.getToken()
                  + (e.getOwner().isEmpty() ? "" : " (owner " + e.getOwner() + ")"));
      context.out().flush();
    }
  }
}
