package dev.fencekeeper.metrics;

/**
 * The TLS listeners of a node, each serving the node's one certificate ({@code tls.cert}): the
 * values of the {@code listener} label of the TLS metrics.
 */
public enum TlsListener {
  /** The Raft port (peers; Ratis's gRPC server). */
  RAFT("raft"),
  /** The client port (gRPC, {@code client.port}). */
  CLIENT("client"),
  /** The JSON gateway (HTTPS, {@code http.port}). */
  HTTP("http");

  private final String label;

  TlsListener(String label) {
    this.label = label;
  }

  /** The value of the {@code listener} label. */
  public String label() {
    return label;
  }
}
