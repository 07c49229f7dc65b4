package dev.fencekeeper.server.local;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How the process flavour of {@link LocalCluster} runs one node: {@code [prefix...] java
 * [jvmFlags...] -cp classPath mainClass verb... --config FILE --parent-pid PID [--join]}. The main
 * class takes the arguments of {@code fencekeeper server}; {@code --parent-pid} makes the node exit
 * when the JVM that started it is gone, so no node outlives a launcher that was itself killed.
 *
 * @param prefix words before the java binary, e.g. {@code ip netns exec NS}; usually none
 * @param java the java binary
 * @param jvmFlags flags for the node's JVM (heap, GC, system properties)
 * @param classPath the node's class path; it must hold the main class and a node's dependencies
 * @param mainClass the class whose {@code main} runs the node
 * @param verb the words before {@code --config}, e.g. {@code server}
 */
public record NodeCommand(
    List<String> prefix,
    String java,
    List<String> jvmFlags,
    String classPath,
    String mainClass,
    List<String> verb) {
  public NodeCommand {
    prefix = List.copyOf(prefix);
    jvmFlags = List.copyOf(jvmFlags);
    verb = List.copyOf(verb);
  }

  /**
   * {@code mainClass server} on this JVM's java binary and class path, with {@code jvmFlags}: what
   * a launcher running on the node's own class path needs.
   */
  public static NodeCommand onThisClassPath(String mainClass, List<String> jvmFlags) {
    return new NodeCommand(
        List.of(),
        thisJava(),
        jvmFlags,
        System.getProperty("java.class.path"),
        mainClass,
        List.of("server"));
  }

  /** The java binary running this JVM. */
  public static String thisJava() {
    return ProcessHandle.current()
        .info()
        .command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
  }

  public NodeCommand withPrefix(List<String> words) {
    return new NodeCommand(words, java, jvmFlags, classPath, mainClass, verb);
  }

  public NodeCommand withJava(String binary) {
    return new NodeCommand(prefix, binary, jvmFlags, classPath, mainClass, verb);
  }

  /** This command with {@code flags} after its own JVM flags. */
  public NodeCommand withMoreJvmFlags(List<String> flags) {
    List<String> all = new ArrayList<>(jvmFlags);
    all.addAll(flags);
    return new NodeCommand(prefix, java, all, classPath, mainClass, verb);
  }

  public NodeCommand withVerb(List<String> words) {
    return new NodeCommand(prefix, java, jvmFlags, classPath, mainClass, words);
  }

  /** The command line that runs the node configured by {@code configFile}. */
  public List<String> commandLine(Path configFile, boolean join) {
    List<String> command = new ArrayList<>(prefix);
    command.add(java);
    command.addAll(jvmFlags);
    command.addAll(List.of("-cp", classPath, mainClass));
    command.addAll(verb);
    command.addAll(
        List.of(
            "--config",
            configFile.toString(),
            "--parent-pid",
            Long.toString(ProcessHandle.current().pid())));
    if (join) {
      command.add("--join");
    }
    return command;
  }
}
