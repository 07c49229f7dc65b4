package dev.fencekeeper.tools;

import dev.fencekeeper.config.CommonPool;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine;

/**
 * TEST ONLY: the command line with a {@code server} whose node runs {@link UnfencedStateMachine},
 * so that a drill started on the test class path can run a cluster that accepts stale writes and
 * show that its checker fails. Takes the arguments of {@code fencekeeper server}.
 */
public final class UnfencedNode {
  private UnfencedNode() {}

  public static void main(String[] args) {
    CommonPool.atLeastTwoThreads();
    SLF4JBridgeHandler.removeHandlersForRootLogger();
    SLF4JBridgeHandler.install();
    CliContext context = CliContext.system();
    CommandLine cli = FencekeeperCli.commandLine(context);
    cli.getCommandSpec().removeSubcommand("server");
    cli.addSubcommand("server", new ServerCommand(context, UnfencedStateMachine::new));
    System.exit(cli.execute(args));
  }
}
