package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Every fencekeeper JVM (CLI, nodes, drill and bench children all start in {@link
 * FencekeeperCli#main}) runs CompletableFuture's async stages on the common pool, even on a 2-core
 * machine where the JVM's default would start a thread per stage. Checked in a child JVM told it
 * has two cores, as the CI box has.
 */
class CommonPoolProcessTest {

  @Test
  void theCommandLineRunsAsyncStagesOnTheCommonPool() throws Exception {
    assertThat(threadOfAnAsyncStage(true)).startsWith("ForkJoinPool.commonPool-worker");
  }

  @Test
  void withoutItTwoCoresStartAThreadPerStage() throws Exception {
    assertThat(threadOfAnAsyncStage(false)).startsWith("Thread-");
  }

  private static String threadOfAnAsyncStage(boolean throughTheCommandLine)
      throws IOException, InterruptedException {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:ActiveProcessorCount=2",
                "-Dfencekeeper.log.level=ERROR",
                "-cp",
                System.getProperty("java.class.path"),
                Probe.class.getName()));
    if (throughTheCommandLine) {
      command.add("--version");
    }
    // The child inherits no -D from this JVM (surefire sets the parallelism for the tests
    // themselves).
    Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return output
        .lines()
        .filter(l -> l.startsWith("async stage ran on "))
        .findFirst()
        .map(l -> l.substring("async stage ran on ".length()))
        .orElseThrow(() -> new AssertionError("the probe printed no thread name:\n" + output));
  }

  /**
   * Runs the real {@code main} (which exits the JVM) when given arguments; reports on the way out.
   */
  public static final class Probe {
    public static void main(String[] args) {
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () ->
                      System.out.println(
                          "async stage ran on "
                              + CompletableFuture.supplyAsync(
                                      () -> Thread.currentThread().getName())
                                  .join())));
      if (args.length > 0) {
        FencekeeperCli.main(args);
      }
    }
  }
}
