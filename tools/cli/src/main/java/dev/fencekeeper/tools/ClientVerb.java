package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * A verb that makes one call to the cluster and prints its answer: one line, or one JSON object
 * with {@code --json}. The exit code is the answer's, from {@link ExitCode}.
 */
abstract class ClientVerb implements Callable<Integer> {
  protected final CliContext context;

  @Mixin protected ClientOptions client;

  @Mixin private TimeoutOption deadline;

  @Spec protected CommandSpec spec;

  ClientVerb(CliContext context) {
    this.context = context;
  }

  /** Makes the call; a rejection is a result, not an exception. */
  abstract ResultView call(FencingClient fencing);

  @Override
  public Integer call() {
    checkOptions();
    ResultView view;
    try (FencingClient fencing = client.connect()) {
      view = call(fencing);
    } catch (FencingException e) {
      // An expected failure (no node reachable, a refused input) is an answer like any other: one
      // line.
      view = ResultView.ofLease(Wire.response(e.result()), null);
    }
    CallOutcome.answered(context);
    return print(explained(view));
  }

  /**
   * How long a command whose answer is lost is sent again ({@link UntilAnswered}): {@code
   * --timeout} less the time to print, else {@link UntilAnswered#DEFAULT_BUDGET}.
   */
  java.time.Duration retryBudget() {
    return deadline.budget(UntilAnswered.DEFAULT_BUDGET);
  }

  /** Rejects option combinations picocli cannot express, before anything is sent. */
  void checkOptions() {}

  CommandLine.ParameterException usageError(String message) {
    return new CommandLine.ParameterException(spec.commandLine(), message);
  }

  /** UNAVAILABLE with a peer whose name does not resolve: say so, since that is likely why. */
  private ResultView explained(ResultView view) {
    if (view.code() != ResultCode.UNAVAILABLE) {
      return view;
    }
    return PeerNames.unresolved(client.cluster())
        .map(
            hint -> {
              Response r = view.response();
              String message = r.getMessage().isEmpty() ? hint : r.getMessage() + " (" + hint + ")";
              return new ResultView(
                  r.toBuilder().setMessage(message).build(),
                  view.resource(),
                  view.key(),
                  view.leaseQuery());
            })
        .orElse(view);
  }

  int print(ResultView view) {
    if (client.json()) {
      Json.print(context.out(), view.json());
    } else {
      context.out().println(view.humanLine());
      context.out().flush();
    }
    return view.exitCode().code();
  }
}
