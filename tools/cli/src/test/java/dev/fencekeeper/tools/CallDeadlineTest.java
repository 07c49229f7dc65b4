package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@link CallDeadline} with a verb whose timing the test controls: whichever of the verb's answer
 * and the deadline comes first is the only result printed, ever, and the deadline counts from the
 * call, not from the verb's preparation.
 */
class CallDeadlineTest {
  @TempDir Path dir;

  /** Prepares, sends, answers after a while; reads or writes as told. */
  @Command(name = "slow")
  static class SlowVerb implements Callable<Integer> {
    private final CliContext context;

    @Mixin ClientOptions client;

    @Mixin TimeoutOption deadline;

    @Option(names = "--prepare", converter = DurationConverter.class)
    Duration prepare = Duration.ZERO;

    @Option(names = "--answer-after", converter = DurationConverter.class)
    Duration answerAfter = Duration.ZERO;

    /** How long formatting the answer takes once it is in. */
    @Option(names = "--print-for", converter = DurationConverter.class)
    Duration printFor = Duration.ZERO;

    SlowVerb(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() throws InterruptedException {
      Thread.sleep(prepare.toMillis());
      CallOutcome.callSent(context);
      Thread.sleep(answerAfter.toMillis());
      context.err().println("answer arrived");
      if (!printFor.isZero()) {
        CallOutcome.answered(context);
        Thread.sleep(printFor.toMillis());
      }
      if (client.json()) {
        context.out().println("{\"status\":\"ACCEPTED\"}");
      } else {
        context.out().println("ACCEPTED");
      }
      return 0;
    }
  }

  /** As {@link SlowVerb}, for a verb that changes something. */
  @Command(name = "slow-write")
  static class SlowWrite extends SlowVerb implements CallDeadline.Changes {
    SlowWrite(CliContext context) {
      super(context);
    }
  }

  private record Captured(ByteArrayOutputStream out, ByteArrayOutputStream err) {
    String stdout() {
      return out.toString(StandardCharsets.UTF_8);
    }

    String stderr() {
      return err.toString(StandardCharsets.UTF_8);
    }
  }

  private Captured captured;

  private int run(String... args) {
    captured = new Captured(new ByteArrayOutputStream(), new ByteArrayOutputStream());
    CliContext context =
        new CliContext(
            new PrintStream(captured.out, true, StandardCharsets.UTF_8),
            new PrintStream(captured.err, true, StandardCharsets.UTF_8),
            Map.of(),
            dir);
    CommandLine cli = FencekeeperCli.commandLine(context);
    cli.addSubcommand(SlowVerb.class);
    cli.addSubcommand(SlowWrite.class);
    return cli.execute(args);
  }

  // Guarantee: an answer that arrives after the deadline is never printed: the timeout is the one
  // result, on stdout and with its exit code, and nothing follows it (the old CallDeadline let the
  // verb's thread print ACCEPTED after the UNAVAILABLE line).
  @Test
  void anAnswerAfterTheDeadlineIsNotPrinted() throws InterruptedException {
    int exit = run("slow", "--answer-after", "400ms", "--timeout", "100ms");
    String printed = captured.stdout();
    Thread.sleep(700); // the verb's thread answers meanwhile

    assertThat(exit).isEqualTo(ExitCode.UNAVAILABLE.code());
    assertThat(captured.stdout()).isEqualTo(printed);
    assertThat(printed.lines()).singleElement().asString().startsWith("UNAVAILABLE: ");
    assertThat(captured.stderr()).doesNotContain("answer arrived");
  }

  // Guarantee: as above with --json: exactly one JSON object, the timeout's.
  @Test
  void anAnswerAfterTheDeadlineIsNotPrintedAsJson() throws InterruptedException {
    int exit = run("slow-write", "--answer-after", "400ms", "--timeout", "100ms", "--json");
    Thread.sleep(700);

    assertThat(exit).isEqualTo(ExitCode.UNAVAILABLE.code());
    assertThat(captured.stdout().lines())
        .singleElement()
        .asString()
        .startsWith("{\"status\":\"UNAVAILABLE\"")
        .contains("may or may not have been applied");
  }

  // Guarantee: a timed-out read says nothing about changes; a timed-out change says it may or may
  // not have been applied.
  @Test
  void onlyAChangeSaysItMayHaveBeenApplied() {
    run("slow", "--answer-after", "2s", "--timeout", "50ms");
    assertThat(captured.stdout())
        .isEqualTo("UNAVAILABLE: no answer within 50ms (--timeout)" + System.lineSeparator());

    run("slow-write", "--answer-after", "2s", "--timeout", "50ms");
    assertThat(captured.stdout())
        .isEqualTo(
            "UNAVAILABLE: no answer within 50ms (--timeout); a change it asked for may or may not"
                + " have been applied"
                + System.lineSeparator());
  }

  // Guarantee: the deadline is the call's: preparation before the call is sent (options, files,
  // TLS material) does not count against it.
  @Test
  void preparationDoesNotCountAgainstTheDeadline() {
    int exit = run("slow", "--prepare", "600ms", "--answer-after", "100ms", "--timeout", "500ms");

    assertThat(exit).as(captured.stdout()).isZero();
    assertThat(captured.stdout()).isEqualTo("ACCEPTED" + System.lineSeparator());
  }

  // Guarantee: the deadline ends with the answer: formatting and printing it (a cold JVM's first
  // JSON output took 250 ms) does not count against it. (Without the verb's mark that its answer
  // is in, this run printed UNAVAILABLE, exit 11.)
  @Test
  void printingTheAnswerDoesNotCountAgainstTheDeadline() throws InterruptedException {
    int exit = run("slow", "--answer-after", "100ms", "--print-for", "600ms", "--timeout", "400ms");
    Thread.sleep(300);

    assertThat(exit).as(captured.stdout()).isZero();
    assertThat(captured.stdout()).isEqualTo("ACCEPTED" + System.lineSeparator());
  }

  // Guarantee: when the answer and the deadline race, each run still prints exactly one result,
  // and its exit code is that result's.
  @Test
  void anAnswerRacingTheDeadlineGivesOneResult() throws InterruptedException {
    for (int i = 0; i < 40; i++) {
      int exit = run("slow", "--answer-after", "30ms", "--timeout", (25 + i % 10) + "ms");
      Captured mine = captured;
      Thread.sleep(60);
      assertThat(mine.stdout().lines()).as("run %d: %s", i, mine.stdout()).hasSize(1);
      String line = mine.stdout().strip();
      assertThat(exit)
          .as(line)
          .isEqualTo(
              line.equals("ACCEPTED") ? ExitCode.SUCCESS.code() : ExitCode.UNAVAILABLE.code());
    }
  }
}
