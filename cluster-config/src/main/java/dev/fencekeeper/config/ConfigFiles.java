package dev.fencekeeper.config;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.CharacterCodingException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/** Reading and writing properties files: UTF-8, every key once, stable text, atomic replace. */
final class ConfigFiles {

  private static final String HEADER =
      "# fencekeeper cluster configuration\n"
          + "# Durations: 250ms, 5s, 2m, 1h. Sizes: bytes, or with a KiB/MiB suffix.\n"
          + "# node.id and storage.dir may be set per node; peers and cluster.name must match on"
          + " all.\n";

  /**
   * The file's properties, unvalidated; unreadable files and keys set twice are errors naming the
   * file.
   */
  static Properties read(Path file) {
    DuplicateRejectingProperties p = new DuplicateRejectingProperties();
    try (Reader in = Files.newBufferedReader(file, UTF_8)) {
      p.load(in);
    } catch (CharacterCodingException e) {
      throw new ConfigException(file + ": not valid UTF-8 (" + e + ")", e);
    } catch (IOException e) {
      throw new ConfigException("cannot read config file " + file + ": " + e, e);
    } catch (IllegalArgumentException e) {
      // Properties.load's only complaint: a malformed \\uXXXX escape.
      throw new ConfigException(file + ": " + e.getMessage(), e);
    }
    if (!p.duplicates.isEmpty()) {
      throw new ConfigException(file + ": " + ConfigReader.joinProblems(p.duplicates));
    }
    return p;
  }

  /**
   * Writes {@code p} as UTF-8, keys in {@link Keys#ALL} order and without the timestamp {@link
   * Properties#store} adds, replacing the file atomically where the file system allows.
   */
  static void write(Path file, Properties p) {
    StringBuilder text = new StringBuilder(HEADER);
    for (String key : Keys.NAMES) {
      String value = p.getProperty(key);
      if (value != null) {
        text.append(escapedLine(key, value)).append('\n');
      }
    }
    Path target = file.toAbsolutePath();
    // A sibling, not Files.createTempFile: that one is created owner-only and the move would
    // carry those permissions over to the config file.
    Path tmp = target.resolveSibling("." + target.getFileName() + ".tmp");
    try {
      Files.createDirectories(target.getParent());
      Files.writeString(tmp, text, UTF_8);
      try {
        Files.move(
            tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException e) {
      try {
        Files.deleteIfExists(tmp);
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw new ConfigException("cannot write config file " + file + ": " + e, e);
    }
  }

  /**
   * One {@code key=value} line that {@link Properties#load} reads back exactly. Hand-rolled because
   * {@link Properties#store} also escapes ':' and '=' in values, turning every peer list into
   * {@code n1@127.0.0.1\:7301}; keys are our own constants and need no escaping.
   */
  private static String escapedLine(String key, String value) {
    StringBuilder line = new StringBuilder(key).append('=');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '\\' -> line.append("\\\\");
        case '\t' -> line.append("\\t");
        case '\n' -> line.append("\\n");
        case '\r' -> line.append("\\r");
        case '\f' -> line.append("\\f");
        // load() strips leading blanks from a value; escaping the first keeps it.
        case ' ' -> line.append(i == 0 ? "\\ " : " ");
        default -> {
          if (c < 0x20 || c == 0x7f) {
            line.append(String.format("\\u%04x", (int) c));
          } else {
            line.append(c);
          }
        }
      }
    }
    return line.toString();
  }

  /** Records keys that {@link Properties#load} sees more than once. */
  private static final class DuplicateRejectingProperties extends Properties {
    private static final long serialVersionUID = 1L;
    private final transient List<String> duplicates = new ArrayList<>();

    @Override
    public synchronized Object put(Object key, Object value) {
      Object previous = super.put(key, value);
      if (previous != null) {
        duplicates.add(key + ": set twice ('" + previous + "', then '" + value + "'); keep one");
      }
      return previous;
    }
  }

  private ConfigFiles() {}
}
