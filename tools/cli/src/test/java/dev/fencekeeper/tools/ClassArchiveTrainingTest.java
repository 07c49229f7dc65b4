package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher runs {@code train-class-archive} silently and carries on without an archive when it
 * fails, so a broken training would only show up as slower start-ups. This test makes it show up
 * here.
 */
class ClassArchiveTrainingTest {

  @Test
  void trainingRunsTheTourAgainstAThrowawayClusterAndLeavesNothingBehind(@TempDir Path workingDir)
      throws IOException {
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    long trainingDirsBefore = trainingDirs(tmp);

    CliRun run = CliRun.run(workingDir, "train-class-archive");

    assertThat(run.exitCode()).as(run.toString()).isZero();
    assertThat(trainingDirs(tmp)).as("its temp dir is removed").isEqualTo(trainingDirsBefore);
    assertThat(run.err()).as(run.toString()).doesNotContain("closing a training node");
  }

  // Guarantee: the load phase the ahead-of-time cache is trained with runs and ends cleanly.
  @Test
  void trainingWithLoadRunsItsWorkersAndLeavesNothingBehind(@TempDir Path workingDir)
      throws IOException {
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    long trainingDirsBefore = trainingDirs(tmp);

    CliRun run = CliRun.run(workingDir, "train-class-archive", "--load", "2s");

    assertThat(run.exitCode()).as(run.toString()).isZero();
    assertThat(trainingDirs(tmp)).as("its temp dir is removed").isEqualTo(trainingDirsBefore);
  }

  // Guarantee: the client verbs' training, its nodes in JVMs of their own, runs the tour through
  // their client ports and stops them again.
  @Test
  void trainingWithNodesApartRunsTheTourAndLeavesNothingBehind(@TempDir Path workingDir)
      throws IOException {
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    long trainingDirsBefore = trainingDirs(tmp);

    CliRun run = CliRun.run(workingDir, "train-class-archive", "--clients");

    assertThat(run.exitCode()).as(run.toString()).isZero();
    assertThat(trainingDirs(tmp)).as("its temp dir is removed").isEqualTo(trainingDirsBefore);
    assertThat(run.err()).as(run.toString()).doesNotContain("closing a training node");
  }

  private static long trainingDirs(Path tmp) throws IOException {
    try (Stream<Path> entries = Files.list(tmp)) {
      return entries
          .filter(p -> p.getFileName().toString().startsWith("fencekeeper-class-archive-"))
          .count();
    }
  }
}
