package dev.fencekeeper.tools.bench;

import dev.fencekeeper.tools.ExtraVerb;

/** Adds {@code bench} to the command line when this module's jar is on its class path. */
public final class BenchVerb implements ExtraVerb {
  @Override
  public Class<?> command() {
    return BenchCommand.class;
  }
}
