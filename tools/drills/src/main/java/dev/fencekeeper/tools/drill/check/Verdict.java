package dev.fencekeeper.tools.drill.check;

import java.util.List;

/**
 * What the checker concluded: a pass only with no finding at all.
 *
 * @param findings every violation found (empty: pass)
 * @param notes what was checked and what could not be, for the report
 */
public record Verdict(List<Finding> findings, List<String> notes) {
  public Verdict {
    findings = List.copyOf(findings);
    notes = List.copyOf(notes);
  }

  public boolean passed() {
    return findings.isEmpty();
  }
}
