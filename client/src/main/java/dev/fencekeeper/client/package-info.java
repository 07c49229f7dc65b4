/**
 * The embedded fencekeeper client: {@link dev.fencekeeper.client.FencingClient} (built with {@link
 * dev.fencekeeper.client.FencingClient#builder()}) and the self-renewing {@link
 * dev.fencekeeper.client.Lease} handles it gives out.
 *
 * <p>One error style throughout: a call that reached the cluster returns what the cluster answered,
 * as a {@link dev.fencekeeper.client.Result} with a {@link dev.fencekeeper.client.ResultCode} and
 * its context (a stale write is an outcome to handle, not an exception); a call whose answer is a
 * {@code Lease} throws {@link dev.fencekeeper.client.FencingException} (or its {@link
 * dev.fencekeeper.client.LeaseHeldException}) carrying that same result when there is no lease.
 * {@code UNAVAILABLE} means no node answered. Interrupting or cancelling a blocking call throws
 * {@link java.util.concurrent.CancellationException}.
 */
package dev.fencekeeper.client;
