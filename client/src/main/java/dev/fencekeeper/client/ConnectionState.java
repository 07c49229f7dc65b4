package dev.fencekeeper.client;

/**
 * What a {@link FencingClient} last saw of the cluster, as told to {@link
 * FencingClient#onConnectionStateChange}. It follows the calls the client makes (its own lease
 * renewals included), so an idle client without leases learns of a change only at its next call.
 */
public enum ConnectionState {
  /** No call has been answered yet. */
  CONNECTING,
  /**
   * The latest call reached a node that answered (a refusal made by a node counts: it answered).
   */
  CONNECTED,
  /**
   * The latest call ended without any node answering: every node refused the connection, or none
   * answered within the call timeout. Leases are then at risk; a held {@link Lease} reports its own
   * state.
   */
  DISCONNECTED
}
