package dev.fencekeeper.client.wire;

import dev.fencekeeper.proto.Request;

/**
 * Which kind of request each wire command is, the one rule the client and the nodes both follow: a
 * query is answered without the log (the client sends it as a read, a node refuses it as a write);
 * a batchable command may share a log entry with others (the client's coalescer joins them, a node
 * refuses a batch holding anything else).
 */
public final class RequestKinds {
  /** The batchable commands, as error messages name them. */
  public static final String BATCHABLE =
      "acquire, renew, release, write, cancel_wait and renew_session";

  private RequestKinds() {}

  /** Reads of the applied state, the node's self-description, watches and backups. */
  public static boolean isQuery(Request.CommandCase command) {
    return switch (command) {
      case READ, LEASE, VALIDATE, LIST, NODE_INFO, WATCH, BACKUP -> true;
      default -> false;
    };
  }

  /**
   * The commands any client sends at a high rate, each judged on its own. Revoke needs an admin
   * check before it is logged, and a batch in a batch would only make the limits harder to state.
   * The core states the same rule on its commands ({@code Command.Batch.isBatchable}), where apply
   * enforces it.
   */
  public static boolean isBatchable(Request.CommandCase command) {
    return switch (command) {
      case ACQUIRE, RENEW, RELEASE, WRITE, CANCEL_WAIT, RENEW_SESSION -> true;
      default -> false;
    };
  }
}
