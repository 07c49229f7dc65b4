package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingClient;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * A verb that makes one call to the cluster and prints its answer: one line, or one JSON object with
 * {@code --json}. The exit code is the answer's, from {@link ExitCode}.
 */
abstract class ClientVerb implements Callable<Integer> {
  protected final CliContext context;

  @Mixin protected ClientOptions client;

  @Spec protected CommandSpec spec;

  ClientVerb(CliContext context) {
    this.context = context;
  }

  /** Makes the call; a rejection is a result, not an exception. */
  abstract ResultView call(FencingClient fencing);

  @Override
  public Integer call() {
    checkOptions();
    try (FencingClient fencing = client.connect()) {
      return print(call(fencing));
    }
  }

  /** Rejects option combinations picocli cannot express, before anything is sent. */
  void checkOptions() {}

  CommandLine.ParameterException usageError(String message) {
    return new CommandLine.ParameterException(spec.commandLine(), message);
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
