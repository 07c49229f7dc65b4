package dev.fencekeeper.tools.bench;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.server.RaftConfig;
import dev.fencekeeper.tools.bench.Workload.Step;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;

/**
 * {@code --baseline ratis}: the W2 and W4 loops against a counter state machine, through a plain
 * {@link RaftClient} built from the same client properties and retry policy shape as {@code
 * FencingClient}.
 */
final class Baseline {
  private static final Message INCREMENT = CounterStateMachine.encode(1);
  private static final Message READ = CounterStateMachine.encode(0);

  private Baseline() {}

  /** The workloads the baseline has an equivalent for. */
  static boolean covers(Workload workload) {
    return workload == Workload.W2 || workload == Workload.W4;
  }

  static RaftClient connect(ClusterConfig config) {
    return RaftClient.newBuilder()
        .setRaftGroup(RaftConfig.group(config))
        .setProperties(RaftConfig.clientProperties(config))
        .setRetryPolicy(
            RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                300, TimeDuration.valueOf(50, TimeUnit.MILLISECONDS)))
        .build();
  }

  static void close(RaftClient client) {
    try {
      client.close();
    } catch (IOException e) {
      // closing a bench client: nothing to do about it
    }
  }

  /** Waits until the counter cluster commits a write. */
  static void awaitReady(RaftClient client, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        if (client.async().send(INCREMENT).get(5, TimeUnit.SECONDS).isSuccess()) {
          return;
        }
      } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
        // not yet
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "the baseline counter cluster did not commit a write within " + timeout);
      }
      Thread.sleep(200);
    }
  }

  static Worker worker(Workload workload, RaftClient client) {
    if (workload == Workload.W2) {
      return () -> ok(client.async().send(INCREMENT));
    }
    if (workload == Workload.W4) {
      return () -> ok(client.async().sendReadOnly(READ));
    }
    throw new IllegalArgumentException("no baseline for " + workload);
  }

  private static Step ok(java.util.concurrent.CompletableFuture<RaftClientReply> reply) {
    try {
      RaftClientReply r = reply.get(60, TimeUnit.SECONDS);
      return r.isSuccess() ? Step.OK : Step.failed(String.valueOf(r.getException()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Step.failed("interrupted");
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      return Step.failed(e.getClass().getSimpleName());
    }
  }
}
