package dev.fencekeeper.tools.drill;

import dev.fencekeeper.tools.ExtraVerb;

/** Adds {@code drill} to the command line when this module's jar is on its class path. */
public final class DrillVerb implements ExtraVerb {
  @Override
  public Class<?> command() {
    return DrillCommand.class;
  }
}
