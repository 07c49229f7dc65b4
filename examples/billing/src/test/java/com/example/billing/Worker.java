package com.example.billing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A {@link BillingWorker} in a JVM of its own, driven through its standard input and output. */
final class Worker implements AutoCloseable {
  private static final Duration STEP_BOUND = Duration.ofSeconds(90);

  private final String name;
  private final Process process;
  private final Writer stdin;
  private final BlockingQueue<String> steps = new LinkedBlockingQueue<>();
  // Everything the worker printed, for the failure message: a build log may show only the assertion.
  private final List<String> output = new CopyOnWriteArrayList<>();
  private boolean stopped;

  private Worker(String name, Process process) {
    this.name = name;
    this.process = process;
    this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    Thread reader = new Thread(this::readOutput, "worker-" + name + "-output");
    reader.setDaemon(true);
    reader.start();
  }

  static Worker start(String name, Path clusterConfig, String jdbcUrl, String batch, Duration ttl)
      throws IOException {
    Process process = new ProcessBuilder(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Djava.util.concurrent.ForkJoinPool.common.parallelism=2",
            "-cp", System.getProperty("java.class.path"),
            BillingWorker.class.getName(),
            clusterConfig.toString(), jdbcUrl, name, batch, ttl.toString()))
        .redirectErrorStream(true)
        .start();
    return new Worker(name, process);
  }

  private void readOutput() {
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = out.readLine()) != null; ) {
        System.out.println("[" + name + "] " + line);
        output.add(line);
        if (line.matches("(ACQUIRED|CHARGED|REFUSED) .*")) {
          steps.add(line);
        }
      }
    } catch (IOException ignored) {
      // the process ended
    }
  }

  /** The worker's next step line; fails if it prints none in time. */
  String nextStep() throws InterruptedException {
    String step = steps.poll(STEP_BOUND.toSeconds(), TimeUnit.SECONDS);
    if (step == null) {
      throw new AssertionError(name + " printed no step within " + STEP_BOUND
          + (process.isAlive() ? "" : " (exited with " + process.exitValue() + ")")
          + "; its output:\n  " + String.join("\n  ", output));
    }
    return step;
  }

  /** The token of an {@code ACQUIRED <token>} step. */
  long acquired() throws InterruptedException {
    String step = nextStep();
    if (!step.startsWith("ACQUIRED ")) {
      throw new AssertionError(name + ": expected ACQUIRED, got " + step);
    }
    return Long.parseLong(step.substring("ACQUIRED ".length()).trim());
  }

  /** Asks the worker to charge {@code invoice}; a stopped worker reads it once it is continued. */
  void charge(String invoice) throws IOException {
    stdin.write(invoice + "\n");
    stdin.flush();
  }

  /** Sends {@code kill -<signal>} to the worker's JVM: STOP freezes it entirely, CONT resumes it. */
  void signal(String signal) throws IOException, InterruptedException {
    if (signal.equals("CONT") && stopped) {
      assertStillStopped();
    }
    kill(signal);
    if (signal.equals("STOP")) {
      awaitStopped();
    }
    stopped = signal.equals("STOP");
  }

  private void kill(String signal) throws IOException, InterruptedException {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
    if (kill.waitFor() != 0) {
      throw new AssertionError("kill -" + signal + " " + name + " failed");
    }
  }

  /**
   * Returns once the kernel reports every thread of the JVM stopped: a STOP takes effect on each thread
   * on its own, and what the test sends the worker next must find all of them frozen.
   */
  private void awaitStopped() throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    String states = threadStates();
    while (!allStopped(states)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(name + " was sent STOP but its threads are " + states);
      }
      Thread.sleep(10);
      states = threadStates();
    }
  }

  /** Fails unless the worker is still stopped: nothing but this test may resume it. */
  private void assertStillStopped() throws IOException {
    String states = threadStates();
    if (!allStopped(states)) {
      throw new AssertionError(name + " was resumed by something other than this test: " + states);
    }
  }

  private static boolean allStopped(String states) {
    return states.chars().allMatch(c -> c == 'T' || c == 't');
  }

  /**
   * One letter per thread of the worker's JVM, its state as /proc shows it (R, S, D, T, ...); empty
   * where there is no /proc (then the test trusts {@code kill}).
   */
  private String threadStates() throws IOException {
    StringBuilder states = new StringBuilder();
    if (!Files.isDirectory(Path.of("/proc/self/task"))) {
      return "";
    }
    try (DirectoryStream<Path> tasks =
        Files.newDirectoryStream(Path.of("/proc", Long.toString(process.pid()), "task"))) {
      for (Path task : tasks) {
        try {
          String stat = Files.readString(task.resolve("stat"));
          states.append(stat.charAt(stat.lastIndexOf(')') + 2));
        } catch (NoSuchFileException ended) {
          // a thread that ended meanwhile
        }
      }
    }
    return states.toString();
  }

  @Override
  public void close() throws Exception {
    if (process.isAlive()) {
      kill("CONT");
      try {
        stdin.write("quit\n");
        stdin.close();
      } catch (IOException ignored) {
        // it ended already
      }
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }
  }
}
