package dev.fencekeeper.client;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What a {@link Lease}, the {@link LeaseSession} and the {@link Acquisitions} need of the client
 * that made them: the calls a lease makes on itself, the bookkeeping of leases held, and the
 * client's threads and reachability ({@link ClusterCalls}). {@link FencingClient} provides it;
 * nothing here reaches its public API.
 */
interface LeaseCalls {
  /** Renews lease {@code token} by its own TTL; refused once the client is closed. */
  CompletableFuture<Result> renew(String resource, long token);

  /** Ends lease {@code token}; also while the client closes, which releases leases this way. */
  CompletableFuture<Result> release(String resource, long token);

  /** A write fenced by {@code token}; refused once the client is closed. */
  CompletableFuture<WriteResult> write(
      String resource, long token, List<KeyChange> changes, String requestId);

  /** The live lease of {@code resource}, linearizably; also while the client closes. */
  CompletableFuture<Result> leaseQuery(String resource);

  /** {@code lease} is no longer held (lost, closed, abandoned): nothing to release at close. */
  void forget(Lease lease, boolean endedOnCluster);

  /** The client's calls, threads, reachability and metrics. */
  ClusterCalls calls();
}
