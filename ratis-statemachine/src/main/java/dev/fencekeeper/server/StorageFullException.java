package dev.fencekeeper.server;

import java.io.IOException;

/**
 * A node's storage directory has less free space than the reserve the node keeps (see {@link
 * FencekeeperServer#storageExhausted()}): it does not start, or it has stopped.
 */
public final class StorageFullException extends IOException {
  private static final long serialVersionUID = 1L;

  StorageFullException(String message) {
    super(message);
  }
}
