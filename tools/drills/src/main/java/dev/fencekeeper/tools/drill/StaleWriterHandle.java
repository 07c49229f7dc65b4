package dev.fencekeeper.tools.drill;

import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.tools.drill.history.HistoryRecorder;
import dev.fencekeeper.tools.drill.history.HistoryRecorder.Pending;
import dev.fencekeeper.tools.drill.history.Op;
import dev.fencekeeper.tools.drill.history.Op.OpType;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The controller's side of worker A: starts its JVM, sends it commands, and records each as an
 * operation invoked when the command was sent and completed when the answer came back. A command
 * that gets no answer in time is recorded as unknown.
 */
final class StaleWriterHandle implements AutoCloseable {
  private static final long ANSWER_TIMEOUT_MS = 30_000;

  private final Process process;
  private final Writer stdin;
  private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
  private final HistoryRecorder recorder;

  StaleWriterHandle(List<PeerAddress> peers, Path logFile, HistoryRecorder recorder) {
    this.recorder = recorder;
    List<String> command = new ArrayList<>();
    command.add(DrillCluster.javaBinary());
    command.addAll(
        List.of(
            "-Xmx128m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Dfencekeeper.log.level=WARN"));
    command.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            StaleWriterProcess.class.getName(),
            peers.stream().map(PeerAddress::toString).collect(Collectors.joining(","))));
    try {
      process =
          new ProcessBuilder(command)
              .redirectError(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start worker A", e);
    }
    stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader out =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                  if (line.startsWith(StaleWriterProcess.ANSWER_PREFIX)) {
                    answers.add(line.substring(StaleWriterProcess.ANSWER_PREFIX.length()));
                  }
                }
              } catch (IOException e) {
                // The process ended.
              }
            },
            "drill-worker-A-output");
    reader.setDaemon(true);
    reader.start();
    String ready = poll();
    if (!"ready".equals(ready)) {
      throw new DrillException("worker A did not start (see " + logFile + ")");
    }
  }

  long pid() {
    return process.pid();
  }

  private String poll() {
    try {
      return answers.poll(ANSWER_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  private Op send(Pending pending, OpType type, String line, ResultCode success) {
    try {
      stdin.write(line + "\n");
      stdin.flush();
    } catch (IOException e) {
      throw new DrillException("worker A is gone: " + e.getMessage());
    }
    String answer = poll();
    if (answer == null) {
      return pending.complete(Op.Outcome.UNKNOWN, "NO_ANSWER", Op.Result.NONE);
    }
    try {
      Response response = Response.parseFrom(Base64.getDecoder().decode(answer));
      return RecordedClient.complete(pending, type, response, success);
    } catch (IOException e) {
      throw new DrillException("worker A answered garbage: " + answer);
    }
  }

  Op acquire(String resource, long ttlMs) {
    Pending p = recorder.invoke("A", OpType.ACQUIRE, resource, null, 0, null);
    return send(p, OpType.ACQUIRE, "acquire " + resource + " " + ttlMs, ResultCode.GRANTED);
  }

  Op write(String resource, String key, long token, String value) {
    Pending p = recorder.invoke("A", OpType.WRITE, resource, key, token, value);
    return send(
        p,
        OpType.WRITE,
        "write " + resource + " " + key + " " + token + " " + value,
        ResultCode.ACCEPTED);
  }

  @Override
  public void close() {
    Signals.sendQuietly("CONT", process.pid());
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
