package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.ResultCode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** What the user docs say about exit codes is what the tool does. */
class DocsExitCodesTest {
  private static final Pattern EXIT = Pattern.compile("\\bexit(?:s| code)? (\\d+)\\b");
  private static final Pattern CODE_NAME = Pattern.compile("`([A-Z][A-Z_]{2,})`");

  // Guarantee: every exit code a page of docs/ or the README names is one the tool has, and where
  // a result code or exit code stands just before it ("`LEASE_EXPIRED` (CLI exit 7)"), the number
  // is the one that code exits with.
  @Test
  void everyExitCodeTheDocsNameIsTheTools() throws IOException {
    Path root = ExitCodeTest.repoRoot();
    List<Path> pages = new ArrayList<>(List.of(root.resolve("README.md")));
    try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    List<String> wrong = new ArrayList<>();
    int checked = 0;
    for (Path page : pages) {
      // Paragraphs as one line each, so a name and its exit code on two lines still meet.
      String text = Files.readString(page).replaceAll("(?<!\n)\n(?!\n)", " ");
      Matcher exit = EXIT.matcher(text);
      while (exit.find()) {
        checked++;
        int number = Integer.parseInt(exit.group(1));
        String where = root.relativize(page) + ": \"" + exit.group() + "\"";
        if (Arrays.stream(ExitCode.values()).noneMatch(c -> c.code() == number)) {
          wrong.add(where + ": the tool has no exit code " + number);
          continue;
        }
        String before = text.substring(Math.max(0, exit.start() - 40), exit.start());
        // A name belongs to this exit code only if no other clause stands between them.
        before =
            before.substring(Math.max(before.lastIndexOf(';'), before.lastIndexOf("exit")) + 1);
        Matcher name = CODE_NAME.matcher(before);
        String last = null;
        while (name.find()) {
          last = name.group(1);
        }
        Optional<ExitCode> named = last == null ? Optional.empty() : exitCodeOf(last);
        if (named.isPresent() && named.get().code() != number) {
          wrong.add(where + ": `" + last + "` exits " + named.get().code());
        }
      }
    }
    assertThat(checked).as("exit codes found in the docs").isGreaterThan(10);
    assertThat(wrong).isEmpty();
  }

  private static Optional<ExitCode> exitCodeOf(String name) {
    for (ResultCode result : ResultCode.values()) {
      if (result.name().equals(name)) {
        return Optional.of(ExitCode.of(result));
      }
    }
    for (ExitCode code : ExitCode.values()) {
      if (code.name().equals(name)) {
        return Optional.of(code);
      }
    }
    return Optional.empty();
  }
}
