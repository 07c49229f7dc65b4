package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.proto.ResultCode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ExitCodeTest {
  private static final Set<ResultCode> SUCCESSES =
      EnumSet.of(
          ResultCode.GRANTED,
          ResultCode.RENEWED,
          ResultCode.RELEASED,
          ResultCode.ACCEPTED,
          ResultCode.FOUND,
          ResultCode.CURRENT,
          ResultCode.REVOKED);

  // Guarantee: every result code a node can send has a deliberately chosen exit code, and only
  // successes exit 0.
  @Test
  void everyResultCodeMapsAndOnlySuccessesExitZero() {
    for (ResultCode code : ResultCode.values()) {
      assertThat(ExitCode.deliberateMapping(code))
          .as(
              "ResultCode.%s has no exit code yet: choose one in ExitCode (and docs/cli.md's"
                  + " table)",
              code)
          .isPresent();
      ExitCode exit = ExitCode.of(code);
      assertThat(exit == ExitCode.SUCCESS).as(code.name()).isEqualTo(SUCCESSES.contains(code));
    }
  }

  // Guarantee: each kind of rejection has its own exit code, so a script can tell them apart by $?
  // alone.
  @Test
  void eachRejectionKindHasItsOwnCode() {
    List<ResultCode> rejections =
        Arrays.stream(ResultCode.values())
            .filter(c -> !SUCCESSES.contains(c))
            .filter(c -> c != ResultCode.RESULT_CODE_UNSPECIFIED && c != ResultCode.UNRECOGNIZED)
            // The envelope of a coalesced batch, never the answer to a request the CLI sends.
            .filter(c -> c != ResultCode.BATCH_ANSWERED)
            // A redirect the client follows; left over, it is UNAVAILABLE (no leader answered).
            .filter(c -> c != ResultCode.NOT_LEADER)
            .toList();
    Set<Integer> codes =
        rejections.stream().map(c -> ExitCode.of(c).code()).collect(Collectors.toSet());
    assertThat(codes).hasSameSizeAs(rejections).doesNotContain(0, 1, 2);
  }

  // Guarantee: the fixed codes the documentation promises (STALE_TOKEN is 6, ...) stay as
  // documented.
  @Test
  void documentedNumbersAreStable() {
    assertThat(ExitCode.of(ResultCode.HELD).code()).isEqualTo(3);
    assertThat(ExitCode.of(ResultCode.STALE_TOKEN).code()).isEqualTo(6);
    assertThat(ExitCode.of(ResultCode.LEASE_EXPIRED).code()).isEqualTo(7);
    assertThat(ExitCode.of(ResultCode.NOT_FOUND).code()).isEqualTo(10);
    assertThat(ExitCode.of(ResultCode.UNAVAILABLE).code()).isEqualTo(11);
    assertThat(ExitCode.of(ResultCode.EXPIRED).code()).isEqualTo(14);
    assertThat(Arrays.stream(ExitCode.values()).map(ExitCode::code).distinct().count())
        .isEqualTo(ExitCode.values().length);
  }

  // Guarantee: the exit-code table of docs/cli.md says exactly what the tool does, row for row.
  @Test
  void documentedTableMatchesTheEnum() throws IOException {
    String doc = Files.readString(repoRoot().resolve("docs/cli.md"));
    Matcher row = Pattern.compile("(?m)^\\| (\\d+) \\| (.+) \\|$").matcher(doc);
    List<String> documented = new ArrayList<>();
    while (row.find()) {
      documented.add(row.group(1) + " " + row.group(2));
    }
    List<String> actual =
        Arrays.stream(ExitCode.values()).map(e -> e.code() + " " + e.meaning()).toList();
    assertThat(documented).containsExactlyElementsOf(actual);
  }

  static Path repoRoot() {
    // Surefire and failsafe both run in tools/cli; the repository's root is two levels up.
    Path root = Path.of("").toAbsolutePath().getParent().getParent();
    assertThat(root.resolve("README.md")).exists();
    return root;
  }
}
