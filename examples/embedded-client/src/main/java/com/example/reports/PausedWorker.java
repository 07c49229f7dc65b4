package com.example.reports;

import dev.fencekeeper.client.AcquireOptions;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.WriteResult;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The paused worker from the README, in Java. Worker A holds a job's lease; worker B waits in line for it.
 * A stops answering, an operator evicts it, B is granted the lease with a newer token and writes; A wakes
 * up and writes with its old lease, and that write is refused. A's loss listener hears of the loss.
 */
public final class PausedWorker {
  /** What each step answered. */
  public record Outcome(
      long tokenA,
      long tokenB,
      WriteResult writeA,
      WriteResult writeB,
      WriteResult lateWriteA,
      Lease.LossReason lossA,
      String valueAfter) {}

  private static final Duration WAIT_BOUND = Duration.ofSeconds(60);

  private PausedWorker() {}

  /** Runs the story on {@code resource} (a fresh one: nobody else may hold or wait for it). */
  public static Outcome run(FencingClient client, String resource) throws Exception {
    Lease a = client.acquire(resource, Duration.ofSeconds(3), "worker-a");
    CompletableFuture<Lease.LossReason> lossA = new CompletableFuture<>();
    a.onLost(lossA::complete);
    WriteResult writeA = a.write("result", "from worker-a");

    // B queues behind A (a plain acquire would fail with LeaseHeldException); the cluster grants it the
    // moment A's lease ends.
    CompletableFuture<Lease> waitingB = client.acquireAsync(
        resource, Duration.ofSeconds(30), WAIT_BOUND, AcquireOptions.defaults().owner("worker-b"));

    // A stalls; an operator evicts it (the CLI's `lease revoke`).
    client.revoke(resource, "worker-a stopped answering");
    try (Lease b = waitingB.get(WAIT_BOUND.toSeconds(), TimeUnit.SECONDS)) {
      WriteResult writeB = b.write("result", "from worker-b");
      // A wakes up and writes with the lease it still has: fenced off by B's newer token.
      WriteResult lateWriteA = a.write("result", "late, from worker-a");
      Lease.LossReason reason = lossA.get(WAIT_BOUND.toSeconds(), TimeUnit.SECONDS);
      String valueAfter = client.read(resource, "result").valueAsString();
      a.close();
      return new Outcome(a.token(), b.token(), writeA, writeB, lateWriteA, reason, valueAfter);
    }
  }
}
