package dev.fencekeeper.tools.drill;

import dev.fencekeeper.config.CommonPool;
import dev.fencekeeper.tools.CliContext;
import dev.fencekeeper.tools.UnfencedNode;
import picocli.CommandLine;

/**
 * TEST ONLY: {@code fencekeeper drill} whose own nodes are {@link UnfencedNode}s, which accept
 * stale writes: run on the test class path, a drill must then fail. Takes the arguments of {@code
 * fencekeeper drill}.
 */
public final class UnfencedDrill {
  private UnfencedDrill() {}

  public static void main(String[] args) {
    CommonPool.atLeastTwoThreads();
    CommandLine drill =
        new CommandLine(new DrillCommand(CliContext.system(), UnfencedNode.class.getName()));
    System.exit(drill.execute(args));
  }
}
