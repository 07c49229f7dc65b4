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
 * Runs the chosen verb as picocli would, bounded by its {@code --timeout} when it has one. The
 * deadline starts when the verb sends its call ({@link CallOutcome#callSent(CliContext)}), after
 * its local preparation (options, files, certificates, connections; itself bounded by {@link
 * #preparationBound}), and ends when the verb has its answer ({@link
 * CallOutcome#answered(CliContext)}): formatting and printing it is not counted; past it the verb's
 * answer no longer matters, so the command prints UNAVAILABLE and exits 11 while the call is still
 * out (the process ends with it; in a test JVM the abandoned call ends by the client's own
 * timeout). {@link CallOutcome} makes the first of the two the only result printed.
 */
final class CallDeadline {
  private final CallOutcome outcome;

  CallDeadline(CallOutcome outcome) {
    this.outcome = outcome;
  }

  /**
   * A verb whose results do not all go to stdout ({@code lease acquire -q}) prints the timeout
   * itself, on the streams of {@code direct}.
   */
  interface PrintsTimeout {
    int printTimeout(Report report, CliContext direct);
  }

  /**
   * Marks a verb that asks the cluster to change something: its timeout says the change may or may
   * not have been applied. A timed-out read says nothing about changes.
   */
  interface Changes {}

  int execute(ParseResult parsed) {
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
    outcome.bound();
    CompletableFuture<Integer> run = new CompletableFuture<>();
    Thread worker =
        new Thread(
            () -> {
              try {
                int code = asPicocliWould.execute(parsed);
                if (outcome.settleByVerb()) {
                  run.complete(code);
                }
              } catch (Throwable t) {
                if (outcome.settleByVerb()) {
                  run.completeExceptionally(t);
                }
              }
            },
            "fencekeeper-verb");
    worker.setDaemon(true);
    worker.start();
    try {
      outcome.awaitSent(run, preparationBound(timeout.get()));
      try {
        return run.get(timeout.get().toMillis(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException | InterruptedException e) {
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        if (outcome.settleByDeadline()) {
          return printTimeout(verb.commandSpec(), timeout.get());
        }
        // The verb's result went out a moment before; it completes the future right after.
        return joinUninterruptibly(run);
      }
    } catch (InterruptedException e) {
      // Interrupted before the call was sent: nothing went out, and nothing was printed either.
      Thread.currentThread().interrupt();
      if (outcome.settleByDeadline()) {
        return printTimeout(verb.commandSpec(), timeout.get());
      }
      return joinUninterruptibly(run);
    } catch (ExecutionException e) {
      throw rethrown(e);
    }
  }

  /**
   * How long a verb may prepare before its deadline starts regardless: the connections it sets up
   * are bounded by the timeout itself ({@link ClientOptions#connect()}), and a cold JVM loads the
   * client's classes before it can start them, which on a loaded host takes longer than a short
   * timeout. A verb stuck in its preparation (a slow stdin) is still ended.
   */
  static Duration preparationBound(Duration timeout) {
    Duration twice = timeout.multipliedBy(2);
    return twice.compareTo(MIN_PREPARATION) > 0 ? twice : MIN_PREPARATION;
  }

  private static final Duration MIN_PREPARATION = Duration.ofSeconds(2);

  private static int joinUninterruptibly(CompletableFuture<Integer> run) {
    try {
      return run.join();
    } catch (java.util.concurrent.CompletionException e) {
      throw rethrown(e);
    }
  }

  /**
   * The verb's exception as picocli's own strategy would have thrown it, for its handlers (usage
   * error, stack trace).
   */
  private static RuntimeException rethrown(Exception e) {
    if (e.getCause() instanceof RuntimeException re) {
      return re;
    }
    if (e.getCause() instanceof Error error) {
      throw error;
    }
    return new IllegalStateException(e.getCause());
  }

  private int printTimeout(CommandLine.Model.CommandSpec verb, Duration timeout) {
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
    String changes =
        verb.userObject() instanceof Changes
            ? "; a change it asked for may or may not have been applied"
            : "";
    Report report =
        Report.failure(
            ResultCode.UNAVAILABLE,
            "no answer within "
                + Durations.format(timeout)
                + " (--timeout)"
                + unresolved
                + changes);
    if (verb.userObject() instanceof PrintsTimeout custom) {
      return custom.printTimeout(report, outcome.real());
    }
    return report.print(outcome.real(), client.json());
  }
}
