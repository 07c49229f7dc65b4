package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README, executed: {@code ./fencekeeper up} as a real process tree on free ports, and the
 * tour's shell commands taken from README.md and run verbatim with bash. Runs in {@code verify},
 * after the jar is built.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ReadmeTourIT {
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(90);
  private static final Duration TOUR_TIMEOUT = Duration.ofMinutes(5);
  // Not the tour's resource: a tour that failed half-way may leave that one held.
  private static final String RESOURCE = "survives-a-kill";
  private static final ObjectMapper MAPPER = new ObjectMapper();

  @TempDir static Path sharedDataDir;
  @TempDir static Path scratch;

  /**
   * The one cluster of this class: the tour and the killed holder leave it serving with three
   * nodes, and the test that kills a node and stops it runs last.
   */
  private LocalUp shared;

  /** The {@code up} of {@link #shared} that {@link #useShared} started. */
  private UpProcess sharedUp;

  private Path root;

  /** The environment of the cluster the running test talks to. */
  private Map<String, String> env;

  @BeforeAll
  void environment() throws IOException {
    shared = LocalUp.on(sharedDataDir, scratch);
    root = shared.root();
  }

  @AfterAll
  void stopEverything() {
    shared.close();
  }

  /** Talks to the shared cluster, starting it for the first test that needs it. */
  private void useShared() throws IOException, InterruptedException {
    if (!shared.isStarted()) {
      sharedUp = shared.start();
    }
    env = shared.env();
  }

  // Guarantee: every command of the README's tour, run verbatim in order, prints and exits as the
  // README says.
  @Test
  void tourRunsVerbatim() throws Exception {
    useShared();
    List<String> commands = tourCommands(Files.readString(root.resolve("README.md")));
    List<TourStep> expected = TourStep.expected();
    assertThat(commands)
        .as("the README's tour changed; update TourStep.expected()")
        .hasSameSizeAs(expected);
    for (int i = 0; i < commands.size(); i++) {
      assertThat(commands.get(i)).as("tour command %d", i + 1).matches(expected.get(i).command());
    }

    List<CommandResult> results = runInOneShell(commands);

    String transcript = transcript(commands, results);
    long a =
        Long.parseLong(find(results.get(1).output(), "worker-a holds token (\\d+)", transcript));
    long b =
        Long.parseLong(find(results.get(4).output(), "worker-b holds token (\\d+)", transcript));
    assertThat(b).as("B's token must be newer than A's\n%s", transcript).isGreaterThan(a);
    for (int i = 0; i < expected.size(); i++) {
      TourStep step = expected.get(i);
      assertThat(results.get(i).exitCode())
          .as("exit code of `%s`\n%s", commands.get(i), transcript)
          .isEqualTo(step.exitCode());
      assertThat(results.get(i).output())
          .as("output of `%s`\n%s", commands.get(i), transcript)
          .matches(step.output(a, b));
    }
    assertNodeLogsRecordTheRejectionOnce(a, b);
  }

  // Every node `up` starts logs into node.log in its storage dir, and A's refused write is in
  // exactly one of them (the leader's), as one structured line.
  private void assertNodeLogsRecordTheRejectionOnce(long a, long b) throws IOException {
    String expected =
        "write rejected resource=daily-sales-report key=2026-11-29 sentToken="
            + a
            + " currentToken="
            + b
            + " holderOwner=worker-b code=STALE_TOKEN";
    long found = 0;
    for (String node : List.of("n1", "n2", "n3")) {
      Path log = sharedDataDir.resolve(node).resolve("node.log");
      assertThat(log).as("log of %s", node).exists();
      String text = Files.readString(log, StandardCharsets.UTF_8);
      assertThat(text).as("log of %s", node).contains("fencekeeper node " + node + " serving on");
      found += text.lines().filter(line -> line.endsWith(expected)).count();
    }
    assertThat(found).as("lines '%s' in the three node logs", expected).isEqualTo(1);
  }

  // Guarantee: `up` reports a killed node while the others keep serving, stops every node on
  // SIGTERM with exit 0, and a restart on the same data resumes the same values and token sequence.
  // Last: it leaves the shared cluster stopped. A cluster of its own would cost one more start.
  @Test
  @Order(Integer.MAX_VALUE)
  void upSurvivesANodeKillStopsCleanlyAndResumes() throws Exception {
    useShared();
    UpProcess up = sharedUp;
    Map<String, Long> pids = up.nodePids();
    // Independent, so side by side: each command is a JVM start.
    Future<JsonNode> before =
        inBackground(() -> json(fencekeeper("status", "--json").expectExit(0)));
    long token =
        Long.parseLong(
            fencekeeper("lease", "acquire", RESOURCE, "--ttl", "1m", "-q").expectExit(0).strip());
    fencekeeper("write", RESOURCE, "k", "kept", "--token", Long.toString(token)).expectExit(0);

    String leader = result(before).get("leader").asText();
    long leaderPid = pids.get(leader);
    ProcessHandle.of(leaderPid).orElseThrow().destroyForcibly();

    up.awaitLine(
        Pattern.compile(
            "node "
                + leader
                + " \\(pid "
                + leaderPid
                + "\\) exited with code 137; n\\d, n\\d keep serving"),
        Duration.ofSeconds(30));
    Awaitility.await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () -> {
              CommandResult status = fencekeeper("status", "--json");
              assertThat(status.exitCode())
                  .as("%s\n--- stderr\n%s", status.output(), status.errors())
                  .isZero();
              assertThat(status.errors()).as("stderr of status").isEmpty();
              JsonNode after = json(status.output());
              assertThat(after.get("leader").asText()).isNotEqualTo(leader);
              for (JsonNode node : after.get("nodes")) {
                if (node.get("id").asText().equals(leader)) {
                  assertThat(node.get("role").asText()).isEqualTo("unreachable");
                }
              }
            });
    assertThat(fencekeeper("read", RESOURCE, "k").expectExit(0)).contains("\"kept\"");

    stopWithSigterm(up, pids);

    UpProcess again = shared.start();
    Future<String> read = inBackground(() -> fencekeeper("read", RESOURCE, "k").expectExit(0));
    fencekeeper("lease", "release", RESOURCE, Long.toString(token)).expectExit(0);
    assertThat(result(read)).contains("\"kept\"", "token " + token);
    long next =
        Long.parseLong(
            fencekeeper("lease", "acquire", RESOURCE, "--ttl", "1m", "-q").expectExit(0).strip());
    assertThat(next).isGreaterThan(token);
    stopWithSigterm(again, again.nodePids());
  }

  // Guarantee: a holder whose process is killed (kill -9: no release, no more renewals) is replaced
  // by the first waiter within its TTL plus a small bound — the leader commits the expiry as it
  // falls due.
  @Test
  void killedHolderProcessIsReplacedByTheFirstWaiter() throws Exception {
    useShared();
    ProcessBuilder holderBuilder =
        new ProcessBuilder(
                "./fencekeeper", "lease", "hold", "job", "--ttl", "3s", "--owner", "dying")
            .directory(root.toFile())
            .redirectError(scratch.resolve("holder.err").toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    holderBuilder.environment().putAll(env);
    Process holder = holderBuilder.start();
    try (java.io.BufferedReader out =
        new java.io.BufferedReader(
            new java.io.InputStreamReader(
                holder.getInputStream(), java.nio.charset.StandardCharsets.UTF_8))) {
      String holding = out.readLine();
      assertThat(holding).as("holder's first line").matches("HOLDING job token=\\d+");
      long holderToken = Long.parseLong(holding.replaceAll(".*token=", ""));

      Path waiterOut = scratch.resolve("waiter.out");
      ProcessBuilder waiterBuilder =
          new ProcessBuilder(
                  "./fencekeeper",
                  "lease",
                  "acquire",
                  "job",
                  "--ttl",
                  "5s",
                  "--owner",
                  "heir",
                  "--wait",
                  "60s",
                  "--json")
              .directory(root.toFile())
              .redirectOutput(waiterOut.toFile())
              .redirectError(scratch.resolve("waiter.err").toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
      waiterBuilder.environment().putAll(env);
      Process waiter = waiterBuilder.start();
      // The waiter's JVM starts and queues; without renewals the holder's 3 s lease would lapse in
      // this time.
      // A 3 s TTL leaves room for a renewal delayed by the JVM start-ups on a loaded 2-core
      // machine.
      Thread.sleep(4_500);

      assertThat(waiter.isAlive())
          .as("the waiter must still be waiting while the holder renews\n%s", outputsOf(waiterOut))
          .isTrue();
      holder.toHandle().destroyForcibly();
      long killedAt = System.nanoTime();
      assertThat(waiter.waitFor(60, TimeUnit.SECONDS))
          .as("waiter finished\n%s", outputsOf(waiterOut))
          .isTrue();
      Duration replacedAfter = Duration.ofNanos(System.nanoTime() - killedAt);

      JsonNode granted = json(Files.readString(waiterOut));
      assertThat(granted.get("status").asText()).isEqualTo("GRANTED");
      assertThat(granted.get("holderOwner").asText()).isEqualTo("heir");
      assertThat(granted.get("token").asLong()).isGreaterThan(holderToken);
      // At most the 3 s TTL left after the last renewal, plus the expiry tick and the waiter's
      // wake-up; generous for a loaded 2-core CI machine.
      assertThat(replacedAfter).isLessThan(Duration.ofMillis(5_500));
    } finally {
      holder.toHandle().destroyForcibly();
    }
  }

  private String outputsOf(Path waiterOut) throws IOException {
    StringBuilder text = new StringBuilder();
    for (Path file :
        List.of(waiterOut, scratch.resolve("waiter.err"), scratch.resolve("holder.err"))) {
      text.append("--- ")
          .append(file.getFileName())
          .append('\n')
          .append(Files.exists(file) ? Files.readString(file) : "(none)")
          .append('\n');
    }
    return text.toString();
  }

  // ---------------------------------------------------------------------------------------------

  private static void stopWithSigterm(UpProcess up, Map<String, Long> nodePids)
      throws InterruptedException {
    // SIGTERM, as a service manager stops it. Through the handle: Process.destroy() would also
    // close the pipe we read its last lines from.
    up.process().toHandle().destroy();
    assertThat(up.awaitExit(Duration.ofSeconds(60))).as(up.describe()).isTrue();
    assertThat(up.process().exitValue()).as(up.describe()).isZero();
    assertThat(up.describe()).contains("all nodes stopped");
    for (Map.Entry<String, Long> node : nodePids.entrySet()) {
      boolean alive = ProcessHandle.of(node.getValue()).map(ProcessHandle::isAlive).orElse(false);
      assertThat(alive)
          .as("node %s (pid %d) still running after `up` exited", node.getKey(), node.getValue())
          .isFalse();
    }
  }

  /** The tour: the first ```bash block after the tour marker, without comments and blank lines. */
  static List<String> tourCommands(String readme) {
    int marker = readme.indexOf("<!-- tour");
    assertThat(marker).as("README.md has no <!-- tour --> marker").isNotNegative();
    int start = readme.indexOf("```bash\n", marker) + "```bash\n".length();
    int end = readme.indexOf("\n```", start);
    return readme
        .substring(start, end)
        .lines()
        .map(String::strip)
        .filter(line -> !line.isEmpty() && !line.startsWith("#"))
        .toList();
  }

  /**
   * Runs the commands in order in one bash process, as a user pasting them would (variables carry
   * over), with a marker between commands recording each one's output and exit status. The status
   * is restored after each marker so that a command reading {@code $?} sees its predecessor's.
   */
  private List<CommandResult> runInOneShell(List<String> commands)
      throws IOException, InterruptedException {
    StringBuilder script = new StringBuilder("restore_status() { return \"$1\"; }\nexec 2>&1\n");
    for (int i = 0; i < commands.size(); i++) {
      script
          .append("printf '\\n@@step %d\\n' ")
          .append(i)
          .append("\n")
          .append(i == 0 ? "" : "restore_status \"$status\"\n")
          .append(commands.get(i))
          .append("\n")
          .append("status=$?; printf '\\n@@status %d %d\\n' ")
          .append(i)
          .append(" \"$status\"\n");
    }
    Path file = scratch.resolve("tour.sh");
    Files.writeString(file, script);
    CommandResult run = run(List.of("bash", file.toString()), TOUR_TIMEOUT, true);

    List<CommandResult> results = new ArrayList<>();
    StringBuilder output = new StringBuilder();
    for (String line : run.output().lines().toList()) {
      Matcher status = Pattern.compile("@@status (\\d+) (\\d+)").matcher(line);
      if (line.startsWith("@@step ")) {
        output.setLength(0);
      } else if (status.matches()) {
        results.add(
            new CommandResult(Integer.parseInt(status.group(2)), output.toString().strip(), ""));
      } else {
        output.append(line).append('\n');
      }
    }
    assertThat(results)
        .as("the tour did not run to the end:\n%s", run.output())
        .hasSameSizeAs(commands);
    return results;
  }

  private CommandResult fencekeeper(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("./fencekeeper"));
    command.addAll(List.of(args));
    return run(command, COMMAND_TIMEOUT, false);
  }

  /**
   * Runs {@code command} in the repository root; stderr goes with stdout when {@code mergeStderr}.
   */
  private CommandResult run(List<String> command, Duration timeout, boolean mergeStderr)
      throws IOException, InterruptedException {
    Path output = Files.createTempFile(scratch, "out", ".txt");
    Path errors = Files.createTempFile(scratch, "err", ".txt");
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(root.toFile())
            .redirectOutput(output.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    if (mergeStderr) {
      builder.redirectErrorStream(true);
    } else {
      builder.redirectError(errors.toFile());
    }
    builder.environment().putAll(env);
    Process process = builder.start();
    try {
      if (!process.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
        throw new AssertionError(
            "`"
                + String.join(" ", command)
                + "` did not finish within "
                + timeout
                + "; output so far:\n"
                + Files.readString(output)
                + Files.readString(errors));
      }
      return new CommandResult(
          process.exitValue(),
          Files.readString(output, StandardCharsets.UTF_8),
          Files.readString(errors, StandardCharsets.UTF_8));
    } finally {
      process.destroyForcibly();
    }
  }

  /** Runs {@code task} on a thread of its own; {@link #result} waits for it. */
  private static <T> Future<T> inBackground(Callable<T> task) {
    FutureTask<T> future = new FutureTask<>(task);
    Thread thread = new Thread(future, "readme-tour-background");
    thread.setDaemon(true);
    thread.start();
    return future;
  }

  /** What {@code future} returned; what it threw is thrown as it was. */
  private static <T> T result(Future<T> future) throws Exception {
    try {
      return future.get(COMMAND_TIMEOUT.toSeconds() + 30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception cause) {
        throw cause;
      }
      throw (Error) e.getCause();
    }
  }

  private static JsonNode json(String output) throws IOException {
    return MAPPER.readTree(output);
  }

  private static String find(String text, String regex, String context) {
    Matcher m = Pattern.compile(regex).matcher(text);
    assertThat(m.find()).as("no %s in:\n%s", regex, context).isTrue();
    return m.group(1);
  }

  private static String transcript(List<String> commands, List<CommandResult> results) {
    StringBuilder s = new StringBuilder("--- tour transcript\n");
    for (int i = 0; i < commands.size(); i++) {
      s.append("$ ")
          .append(commands.get(i))
          .append("   # exit ")
          .append(results.get(i).exitCode())
          .append('\n')
          .append(results.get(i).output())
          .append(results.get(i).output().isEmpty() ? "" : "\n");
    }
    return s.toString();
  }

  /**
   * How one command exited and what it printed (stderr is empty where it was merged into the
   * output).
   */
  record CommandResult(int exitCode, String output, String errors) {
    /** The output, after asserting the exit code. */
    String expectExit(int expected) {
      assertThat(exitCode).as("%s\n--- stderr\n%s", output, errors).isEqualTo(expected);
      return output;
    }
  }

  /**
   * What each tour command must do. {A} and {B} in an output pattern stand for the tokens the tour
   * printed.
   *
   * @param command a regex the README's command must match, so README and test cannot drift apart
   *     silently
   * @param outputTemplate a regex the whole output must match, with {A} and {B} still to fill in
   */
  record TourStep(String command, int exitCode, String outputTemplate) {
    String output(long a, long b) {
      return outputTemplate.replace("{A}", Long.toString(a)).replace("{B}", Long.toString(b));
    }

    static List<TourStep> expected() {
      return List.of(
          new TourStep(
              "A=\\$\\(\\./fencekeeper lease acquire daily-sales-report .*--owner worker-a.* -q\\)",
              0,
              ""),
          new TourStep("echo .*\\$A.*", 0, "worker-a holds token \\d+"),
          new TourStep("sleep \\d+", 0, ""),
          new TourStep(
              "B=\\$\\(\\./fencekeeper lease acquire daily-sales-report .*--owner worker-b.* -q\\)",
              0,
              ""),
          new TourStep("echo .*\\$B.*", 0, "worker-b holds token \\d+"),
          new TourStep(
              "\\./fencekeeper lease show daily-sales-report",
              0,
              "FOUND daily-sales-report token={B} expires in \\d+\\.\\ds \\(owner worker-b\\)"),
          new TourStep(
              "\\./fencekeeper write daily-sales-report .* --token \"\\$B\"",
              0,
              "ACCEPTED daily-sales-report/2026-11-29 token={B} version=1"),
          new TourStep(
              "\\./fencekeeper write daily-sales-report .* --token \"\\$A\"",
              6,
              "STALE_TOKEN: token {A} is stale; daily-sales-report has token {B} held by worker-b"),
          new TourStep("echo \"exit code \\$\\?\"", 0, "exit code 6"),
          new TourStep(
              "\\./fencekeeper read daily-sales-report 2026-11-29",
              0,
              "FOUND daily-sales-report/2026-11-29 = \"totals by worker-b\" \\(token {B}, version"
                  + " 1\\)"),
          new TourStep(
              "\\./fencekeeper lease release daily-sales-report \"\\$B\"",
              0,
              "RELEASED daily-sales-report token={B}"),
          new TourStep(
              "\\./fencekeeper status",
              0,
              "(?s)ID +ADDRESS +PID +ROLE +TERM +APPLIED +COMMIT +SNAPSHOT +LOG +LEADER +MATCH"
                  + " +LAG\\n"
                  + ".*LEADER.*\\n"
                  + "leader n\\d"));
    }
  }
}
