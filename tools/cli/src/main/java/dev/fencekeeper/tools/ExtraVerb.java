package dev.fencekeeper.tools;

/**
 * A verb whose code ships in a module of its own, so that the command line every node runs carries
 * none of its dependencies: {@code drill} (fencekeeper-drills) and {@code bench}
 * (fencekeeper-bench). The command line adds each one a {@link java.util.ServiceLoader} finds on
 * its class path; the launchers put a module's jar there for the verbs it holds, and for {@code
 * --help} and {@code completion}.
 */
public interface ExtraVerb {
  /**
   * The verb's picocli command class, created like the built-in verbs (through its {@link
   * CliContext} constructor when it has one).
   */
  Class<?> command();
}
