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

  // Ratis hands the factory only its Parameters, and each appender its server's properties.
  static final String STALL_BOUND_MS_KEY = "fencekeeper.log-appender.stall-restart-ms";

  /**
   * Makes {@code properties} start a server on this transport, whose appenders restart after a
   * follower stalled for {@code stallBoundMs} ({@link FollowerStall}).
   */
  public static void install(RaftProperties properties, long stallBoundMs) {
    if (stallBoundMs <= 0) {
      throw new IllegalArgumentException("stall bound must be positive: " + stallBoundMs);
    }
    RaftConfigKeys.Rpc.setType(properties, new RecoveringGrpc());
    properties.setLong(STALL_BOUND_MS_KEY, stallBoundMs);
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
      long stallBoundMs =
          server
              .getRaftServer()
              .getProperties()
              .getLong(STALL_BOUND_MS_KEY, RecoveringLogAppender.DEFAULT_STALL_BOUND_MS);
      return new RecoveringLogAppender(server, state, follower, stallBoundMs);
    }
  }
}
