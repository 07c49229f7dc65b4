package dev.fencekeeper.gateway;

import org.apache.ratis.thirdparty.io.grpc.stub.ServerCallStreamObserver;

/**
 * The answering side of one in-process call, as the service sees it: what gRPC's own server would
 * give it, so the service behaves as on its client port. Answers go to a {@link Sink} (the HTTP
 * exchange); readiness follows the connection's writability, and a connection that closes first
 * cancels the call.
 */
final class CallObserver<T> extends ServerCallStreamObserver<T> {

  /** Where answers go. */
  interface Sink<T> {
    void next(T message);

    void completed();

    void failed(Throwable error);

    boolean writable();
  }

  private final Sink<T> sink;
  private volatile boolean cancelled;
  private volatile boolean closed;
  private volatile Runnable onCancel;
  private volatile Runnable onReady;
  private volatile Runnable onClose;
  private volatile Runnable onRequest;
  private volatile boolean autoRequest = true;
  private int requested;

  CallObserver(Sink<T> sink) {
    this.sink = sink;
  }

  @Override
  public void onNext(T value) {
    if (!cancelled && !closed) {
      sink.next(value);
    }
  }

  @Override
  public void onError(Throwable t) {
    if (!closed) {
      closed = true;
      if (!cancelled) {
        sink.failed(t);
      }
      runQuietly(onClose);
    }
  }

  @Override
  public void onCompleted() {
    if (!closed) {
      closed = true;
      if (!cancelled) {
        sink.completed();
      }
      runQuietly(onClose);
    }
  }

  /** The HTTP side went away (or answered a rejection) before the call ended. */
  void cancel() {
    if (!cancelled && !closed) {
      cancelled = true;
      runQuietly(onCancel);
    }
  }

  /** The connection can take more answers again. */
  void ready() {
    runQuietly(onReady);
  }

  boolean isClosed() {
    return closed;
  }

  /** Takes one request message for the service when flow control allows; false to hold it back. */
  synchronized boolean takePermit() {
    if (autoRequest) {
      return true;
    }
    if (requested > 0) {
      requested--;
      return true;
    }
    return false;
  }

  /** Called when the service asks for more request messages (the session's inbound side). */
  void onRequest(Runnable handler) {
    this.onRequest = handler;
  }

  @Override
  public boolean isCancelled() {
    return cancelled;
  }

  @Override
  public void setOnCancelHandler(Runnable handler) {
    this.onCancel = handler;
  }

  @Override
  public void setOnCloseHandler(Runnable handler) {
    this.onClose = handler;
  }

  @Override
  public void setCompression(String compression) {
    // HTTP responses are not compressed.
  }

  @Override
  public boolean isReady() {
    return !cancelled && sink.writable();
  }

  @Override
  public void setOnReadyHandler(Runnable handler) {
    this.onReady = handler;
  }

  @Override
  public void disableAutoInboundFlowControl() {
    autoRequest = false;
  }

  @Override
  public void disableAutoRequest() {
    autoRequest = false;
  }

  @Override
  public void request(int count) {
    synchronized (this) {
      requested += count;
    }
    runQuietly(onRequest);
  }

  @Override
  public void setMessageCompression(boolean enable) {
    // HTTP responses are not compressed.
  }

  private static void runQuietly(Runnable handler) {
    if (handler != null) {
      handler.run();
    }
  }
}
