package dev.fencekeeper.core;

import static dev.fencekeeper.core.Code.ACCEPTED;
import static dev.fencekeeper.core.Code.GRANTED;
import static dev.fencekeeper.core.Code.INVALID_ARGUMENT;
import static dev.fencekeeper.core.Harness.T0;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.IntStream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Unicode format characters (category Cf: bidi overrides and isolates, zero-width spaces and
 * joiners, the byte-order mark, tag characters) change how text is shown without showing
 * themselves, so a resource named {@code inv\u202Egnp.exe} is listed as {@code invexe.png}. Names,
 * keys and owners refuse them like control characters; the same text without them is accepted.
 */
class FormatCharactersTest {
  private static final List<Integer> FORMAT_CHARACTERS =
      IntStream.rangeClosed(0, Character.MAX_CODE_POINT)
          .filter(cp -> Character.getType(cp) == Character.FORMAT)
          .boxed()
          .toList();

  // Every Cf code point of this Java's Unicode tables, in every field that names something.
  @Example
  void everyFormatCharacterIsRefusedInResourceKeyAndOwner() {
    assertThat(FORMAT_CHARACTERS).contains(0x202E, 0x200B, 0x200D, 0xFEFF, 0x2066, 0x00AD, 0xE0001);
    for (int cp : FORMAT_CHARACTERS) {
      String f = new String(Character.toChars(cp));
      String hex = String.format("U+%04X", cp);
      Harness h = new Harness();
      long token = h.acquire(T0, "r", "A", 10_000).token();
      String before = h.dump();

      Outcome resource = h.acquire(T0 + 1, "x" + f + "y", "A", 1000);
      Outcome owner = h.acquire(T0 + 2, "fresh", "A" + f, 1000);
      Outcome key = h.put(T0 + 3, "r", token, "k" + f, "v");

      assertThat(resource.code()).as(hex).isEqualTo(INVALID_ARGUMENT);
      assertThat(resource.message())
          .as(hex)
          .startsWith("resource:")
          .contains("format character " + hex);
      assertThat(owner.code()).as(hex).isEqualTo(INVALID_ARGUMENT);
      assertThat(owner.message()).as(hex).startsWith("owner:");
      assertThat(key.code()).as(hex).isEqualTo(INVALID_ARGUMENT);
      assertThat(key.message()).as(hex).startsWith("key:");
      assertThat(h.state.read("r", "k" + f).code()).as(hex).isEqualTo(INVALID_ARGUMENT);
      assertThat(h.dump()).as(hex).isEqualTo(before);
    }
  }

  @Property
  void textWithAFormatCharacterIsRefusedAndWithoutItAccepted(
      @ForAll("names") String name,
      @ForAll("formatCharacters") int cp,
      @ForAll @IntRange(max = 16) int at) {
    int split = Math.min(at, name.length());
    String withFormat =
        name.substring(0, split) + new String(Character.toChars(cp)) + name.substring(split);
    Harness h = new Harness();

    Outcome refused = h.acquire(T0, withFormat, "A", 1000);
    Outcome granted = h.acquire(T0 + 1, name, "A", 1000);

    assertThat(refused.code()).isEqualTo(INVALID_ARGUMENT);
    assertThat(refused.message()).startsWith("resource:");
    assertThat(h.state.validate(new Command.Acquire(withFormat, "A", 1000)))
        .isEqualTo(refused.message());
    assertThat(granted.code()).isEqualTo(GRANTED);
    assertThat(h.put(T0 + 2, name, granted.token(), name, "v").code()).isEqualTo(ACCEPTED);
    assertThat(h.put(T0 + 3, name, granted.token(), withFormat, "v").code())
        .isEqualTo(INVALID_ARGUMENT);
  }

  @Provide
  Arbitrary<String> names() {
    // Letters of several scripts, digits and punctuation: visible text that must stay accepted.
    return Arbitraries.strings()
        .withCharRange('a', 'z')
        .withCharRange('0', '9')
        .withChars('-', '_', '.', '/', ':', '\u00e9', '\u05d0', '\u0627', '\u4e2d', '\u0416')
        .ofMinLength(1)
        .ofMaxLength(40);
  }

  @Provide
  Arbitrary<Integer> formatCharacters() {
    return Arbitraries.of(FORMAT_CHARACTERS);
  }
}
