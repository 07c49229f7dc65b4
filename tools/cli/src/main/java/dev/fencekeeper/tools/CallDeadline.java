package dev.fencekeeper.tools;

import dev.fencekeeper.config.Durations;
import dev.fencekeeper.proto.ResultCode;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/**
 * Runs the chosen verb as picocli would, bounded by its {@code --timeout} when it has one: past the
 * deadline the verb's answer no longer matters, so the command prints UNAVAILABLE and exits 11
 * while the call is still out (the process ends with it; in a test JVM the abandoned call ends by
 * the client's own timeout).
 */
final class CallDeadline {
  private CallDeadline() {}

  /**
   * A verb whose results do not all go to stdout ({@code lease acquire -q}) prints the timeout
   * itself.
   */
  interface PrintsTimeout {
    int printTimeout(Report report);
  }

  static int execute(ParseResult parsed) {
    ParseResult verb = parsed;
    while (verb.hasSubcommand()) {
      verb = verb.subcommand();
    }
    CommandLine.IExecutionStrategy asPicocliWould = new CommandLine.RunLast();
    Optional<Duration> timeout =
        verb.isUsageHelpRequested() || verb.isVersionHelpRequested()
            ? Optional.empty()
            : TimeoutOption.of(verb.commandSpec());
    if (timeout.isEmpty()) {
      return asPicocliWould.execute(parsed);
    }
    CompletableFuture<Integer> run = new CompletableFuture<>();
    Thread worker =
        new Thread(
            () -> {
              try {
                run.complete(asPicocliWould.execute(parsed));
              } catch (Throwable t) {
                run.completeExceptionally(t);
              }
            },
            "fencekeeper-verb");
    worker.setDaemon(true);
    worker.start();
    try {
      return run.get(timeout.get().toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      return printTimeout(verb.commandSpec(), timeout.get());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return printTimeout(verb.commandSpec(), timeout.get());
    } catch (ExecutionException e) {
      // Rethrown as picocli's own strategy would have thrown it, for its handlers (usage error,
      // stack trace).
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      if (e.getCause() instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException(e.getCause());
    }
  }

  private static int printTimeout(CommandLine.Model.CommandSpec verb, Duration timeout) {
    ClientOptions client =
        verb.mixins().values().stream()
            .map(CommandLine.Model.CommandSpec::userObject)
            .filter(ClientOptions.class::isInstance)
            .map(ClientOptions.class::cast)
            .findFirst()
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        verb.qualifiedName() + " has --timeout but no ClientOptions"));
    String unresolved =
        PeerNames.unresolved(client.cluster()).map(hint -> " (" + hint + ")").orElse("");
    Report report =
        Report.failure(
            ResultCode.UNAVAILABLE,
            "no answer within "
                + Durations.format(timeout)
                + " (--timeout)"
                + unresolved
                + "; a change it asked for may or may not have been applied");
    if (verb.userObject() instanceof PrintsTimeout custom) {
      return custom.printTimeout(report);
    }
    return report.print(client.context(), client.json());
  }
}
