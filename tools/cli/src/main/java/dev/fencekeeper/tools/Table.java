package dev.fencekeeper.tools;

import java.util.ArrayList;
import java.util.List;

/** Rows of text in left-aligned columns two spaces apart, the last column unpadded. */
final class Table {
  private final List<String[]> rows = new ArrayList<>();

  Table(String... header) {
    rows.add(header);
  }

  Table row(String... cells) {
    rows.add(cells);
    return this;
  }

  boolean isEmpty() {
    return rows.size() == 1;
  }

  List<String> lines() {
    int columns = rows.get(0).length;
    int[] widths = new int[columns];
    for (String[] row : rows) {
      for (int i = 0; i < columns; i++) {
        widths[i] = Math.max(widths[i], row[i].length());
      }
    }
    List<String> lines = new ArrayList<>();
    for (String[] row : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < columns; i++) {
        line.append(
            i == columns - 1 ? row[i] : String.format("%-" + (widths[i] + 2) + "s", row[i]));
      }
      lines.add(line.toString().stripTrailing());
    }
    return lines;
  }
}
