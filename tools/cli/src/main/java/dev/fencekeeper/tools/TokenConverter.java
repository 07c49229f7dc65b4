package dev.fencekeeper.tools;

import picocli.CommandLine;

/**
 * {@code --token N} and {@code <token>}: a fencing token is a Raft log position, so a positive
 * integer. Like a negative {@code --ttl}, anything else is wrong on its face and refused before it
 * is sent (exit 2); the cluster's INVALID_ARGUMENT (exit 9) is for input it refuses against its
 * limits.
 */
public final class TokenConverter implements CommandLine.ITypeConverter<Long> {
  @Override
  public Long convert(String text) {
    long token;
    try {
      token = Long.parseLong(text.strip());
    } catch (NumberFormatException e) {
      throw new CommandLine.TypeConversionException(
          "'" + text + "' is not a token (a positive integer)");
    }
    if (token <= 0) {
      throw new CommandLine.TypeConversionException(
          "'" + text + "' is not a token: tokens are positive");
    }
    return token;
  }
}
