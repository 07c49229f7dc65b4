package dev.fencekeeper.replication;

import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.rpc.RpcFactory;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.leader.LogAppender;

/**
 * Ratis's gRPC transport with {@link RecoveringLogAppender} as the leader's log appender: named in
 * a server's properties as its RPC type ({@link #install}), Ratis creates it by class name. Clients
 * and everything else on the wire are Ratis's gRPC unchanged.
 */
public final class RecoveringGrpc implements RpcType {

  /** Makes {@code properties} start a server on this transport. */
  public static void install(RaftProperties properties) {
    RaftConfigKeys.Rpc.setType(properties, new RecoveringGrpc());
  }

  /** Ratis instantiates the type named in the properties by this constructor. */
  public RecoveringGrpc() {}

  @Override
  public String name() {
    return RecoveringGrpc.class.getName();
  }

  @Override
  public RpcFactory newFactory(Parameters parameters) {
    return new Factory(parameters);
  }

  /** Ratis's gRPC factory, but for the log appender it hands the leader. */
  static final class Factory extends GrpcFactory {
    Factory(Parameters parameters) {
      super(parameters);
    }

    @Override
    public LogAppender newLogAppender(
        RaftServer.Division server, LeaderState state, FollowerInfo follower) {
      return new RecoveringLogAppender(
          server, state, follower, RecoveringLogAppender.STALL_BOUND_MS);
    }
  }
}
