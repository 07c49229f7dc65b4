package dev.fencekeeper.clientport;

import java.io.InputStream;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.UnknownFieldSet;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCallListener;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerMethodDefinition;
import org.apache.ratis.thirdparty.io.grpc.ServerServiceDefinition;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;

/**
 * Refuses request bytes that are no protobuf message of the call's request type with gRPC
 * INVALID_ARGUMENT, naming the type and what is wrong, where gRPC alone would answer UNKNOWN
 * ("Application error processing RPC"). gRPC decodes a request before any interceptor sees it and
 * turns a decoding failure into that UNKNOWN, so each method's request marshaller is wrapped: a
 * message that does not decode becomes an empty request marked with a field of its own, which the
 * call's listener refuses before the service sees anything.
 */
final class UndecodableRequests {
  /** The mark: the highest field number protobuf allows, which no fencekeeper message uses. */
  private static final int MARK = (1 << 29) - 1;

  private UndecodableRequests() {}

  /** {@code service} with every method refusing undecodable requests. */
  static ServerServiceDefinition refuse(ServerServiceDefinition service) {
    ServerServiceDefinition.Builder refusing =
        ServerServiceDefinition.builder(service.getServiceDescriptor().getName());
    for (ServerMethodDefinition<?, ?> method : service.getMethods()) {
      refusing.addMethod(refuse(method));
    }
    return refusing.build();
  }

  private static <Q, A> ServerMethodDefinition<Q, A> refuse(ServerMethodDefinition<Q, A> method) {
    MethodDescriptor<Q, A> descriptor = method.getMethodDescriptor();
    MethodDescriptor.Marshaller<Q> decoder = descriptor.getRequestMarshaller();
    if (!(decoder instanceof MethodDescriptor.PrototypeMarshaller<Q> typed)
        || !(typed.getMessagePrototype() instanceof Message)) {
      return method;
    }
    MethodDescriptor<Q, A> marking =
        descriptor.toBuilder(new Marking<>(typed), descriptor.getResponseMarshaller()).build();
    ServerCallHandler<Q, A> handler = method.getServerCallHandler();
    return ServerMethodDefinition.create(
        marking, (call, headers) -> new Refusing<>(handler.startCall(call, headers), call));
  }

  /** Decodes as the generated marshaller does; bytes it cannot decode become a marked request. */
  private static final class Marking<Q> implements MethodDescriptor.Marshaller<Q> {
    private final MethodDescriptor.PrototypeMarshaller<Q> decoder;

    Marking(MethodDescriptor.PrototypeMarshaller<Q> decoder) {
      this.decoder = decoder;
    }

    @Override
    public InputStream stream(Q value) {
      return decoder.stream(value);
    }

    @Override
    public Q parse(InputStream stream) {
      try {
        return decoder.parse(stream);
      } catch (StatusRuntimeException e) {
        Message prototype = (Message) decoder.getMessagePrototype();
        Throwable cause = e.getCause() != null ? e.getCause() : e;
        String problem =
            "the request is no valid "
                + prototype.getDescriptorForType().getFullName()
                + " (nothing was done): "
                + cause.getMessage();
        @SuppressWarnings("unchecked")
        Q marked =
            (Q)
                prototype.toBuilder()
                    .setUnknownFields(
                        UnknownFieldSet.newBuilder()
                            .addField(
                                MARK,
                                UnknownFieldSet.Field.newBuilder()
                                    .addLengthDelimited(ByteString.copyFromUtf8(problem))
                                    .build())
                            .build())
                    .build();
        return marked;
      }
    }
  }

  /** Closes the call with INVALID_ARGUMENT at a marked request, and passes nothing on after it. */
  private static final class Refusing<Q, A>
      extends ForwardingServerCallListener.SimpleForwardingServerCallListener<Q> {
    private final ServerCall<Q, A> call;
    private boolean refused;

    Refusing(ServerCall.Listener<Q> next, ServerCall<Q, A> call) {
      super(next);
      this.call = call;
    }

    @Override
    public void onMessage(Q message) {
      if (refused) {
        return;
      }
      UnknownFieldSet unknown = ((Message) message).getUnknownFields();
      if (unknown.hasField(MARK) && !unknown.getField(MARK).getLengthDelimitedList().isEmpty()) {
        refused = true;
        call.close(
            Status.INVALID_ARGUMENT.withDescription(
                unknown.getField(MARK).getLengthDelimitedList().get(0).toStringUtf8()),
            new Metadata());
        return;
      }
      super.onMessage(message);
    }

    @Override
    public void onHalfClose() {
      if (!refused) {
        super.onHalfClose();
      }
    }

    @Override
    public void onReady() {
      if (!refused) {
        super.onReady();
      }
    }
  }
}
