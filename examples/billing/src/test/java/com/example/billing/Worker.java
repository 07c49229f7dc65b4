package com.example.billing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A {@link BillingWorker} in a JVM of its own, driven through its standard input and output. */
final class Worker implements AutoCloseable {
  private static final Duration STEP_BOUND = Duration.ofSeconds(90);

  private final String name;
  private final Process process;
  private final Writer stdin;
  private final BlockingQueue<String> steps = new LinkedBlockingQueue<>();

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
          + (process.isAlive() ? "" : " (exited with " + process.exitValue() + ")"));
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
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
    if (kill.waitFor() != 0) {
      throw new AssertionError("kill -" + signal + " " + name + " failed");
    }
  }

  @Override
  public void close() throws Exception {
    if (process.isAlive()) {
      signal("CONT");
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
