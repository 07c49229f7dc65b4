package dev.fencekeeper.statemachine;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.config.Overload;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.LeaseRecord;
import dev.fencekeeper.core.ResourceRecord;
import dev.fencekeeper.core.ValueRecord;
import dev.fencekeeper.metrics.FollowerLag;
import dev.fencekeeper.metrics.StateMachineMetrics;
import dev.fencekeeper.metrics.StateReader;
import dev.fencekeeper.proto.FollowerProgress;
import dev.fencekeeper.proto.ListEntry;
import dev.fencekeeper.proto.ListRequest;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.ServerLimits;
import java.io.IOException;
import java.io.OutputStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every request answered without the log, on whichever node is asked (linearizable reads reach it
 * on the leader once the client port's read barrier passed): reads, leases, validations and
 * listings of the applied state under the read lock, this node's self-description, watches of lease
 * events and backups.
 */
final class QueryService {
  private static final Logger LOG = LoggerFactory.getLogger(QueryService.class);
  private static final int DEFAULT_PAGE = 100;
  private static final int MAX_PAGE = 1000;

  /** The Raft division this node runs, or null while it does not run one. */
  @FunctionalInterface
  interface DivisionSource {
    RaftServer.Division division() throws IOException;
  }

  private final Limits limits;
  private final StateReader state;
  private final EventLog eventLog;
  private final DivisionSource division;
  private final LongSupplier snapshotIndex;
  private final Function<OutputStream, BackupStore.Frozen> frozenState;
  private volatile BackupStore backups;
  private volatile Security security = Security.none();
  private volatile Overload overload = Overload.defaults();
  private volatile StateMachineMetrics metrics = StateMachineMetrics.NONE;
  private volatile String clientAddress = "";
  private volatile Supplier<String> clusterId = () -> "";

  /**
   * @param snapshotIndex the index of this node's newest snapshot (-1 when none)
   * @param frozenState writes a consistent copy of the state for a backup
   */
  QueryService(
      Limits limits,
      StateReader state,
      EventLog eventLog,
      DivisionSource division,
      LongSupplier snapshotIndex,
      Function<OutputStream, BackupStore.Frozen> frozenState) {
    this.limits = limits;
    this.state = state;
    this.eventLog = eventLog;
    this.division = division;
    this.snapshotIndex = snapshotIndex;
    this.frozenState = frozenState;
  }

  void setBackups(BackupStore backups) {
    this.backups = backups;
  }

  void setSecurity(Security security) {
    this.security = security;
  }

  /** The read bound named in an OVERLOADED answer; set before the server starts. */
  void setOverload(Overload overload) {
    this.overload = overload;
  }

  void setMetrics(StateMachineMetrics metrics) {
    this.metrics = metrics;
  }

  /** This node's client address, for its self-description. */
  void setClientAddress(String address) {
    this.clientAddress = address == null ? "" : address;
  }

  /** This node's cluster id as {@code NodeStatus} reports it; empty while it knows none. */
  void setClusterId(Supplier<String> id) {
    this.clusterId = id;
  }

  /** The answer to {@code parsed}, whose caller the node stamped; never fails. */
  CompletableFuture<Response> query(Request parsed) {
    Response response;
    try {
      if (parsed.getReadOverloaded()) {
        return CompletableFuture.completedFuture(readOverloaded());
      }
      if (parsed.getCommandCase() == Request.CommandCase.WATCH) {
        return eventLog.watch(parsed.getWatch(), parsed.getCaller(), limits.maxWatchesPerClient());
      }
      if (parsed.getCommandCase() == Request.CommandCase.BACKUP) {
        return CompletableFuture.completedFuture(backup(parsed));
      }
      response = answer(parsed);
    } catch (RuntimeException e) {
      LOG.error("Bug: query threw", e);
      response = WireCodec.internal("query failed: " + e);
    }
    return CompletableFuture.completedFuture(response);
  }

  private Response backup(Request request) {
    if (!security.isAdmin(request.getCaller())) {
      Response denied =
          WireCodec.toResponse(Admission.permissionDenied("backup", request.getCaller()));
      metrics.denied("backup", request.getCaller(), denied.getMessage());
      return denied;
    }
    return backups.serve(request.getBackup(), frozenState);
  }

  /**
   * The answer to a read the node refused on arrival (the client port marks it) because it already
   * held overload.pending-reads.max reads: nothing was read, and the caller may simply retry later.
   */
  private Response readOverloaded() {
    return Response.newBuilder()
        .setCode(ResultCode.OVERLOADED)
        .setMessage(
            "this node already holds "
                + overload.maxPendingReads()
                + " reads in flight"
                + " (overload.pending-reads.max); nothing was read, retry later")
        .build();
  }

  private Response answer(Request request) {
    if (request.getCommandCase() == Request.CommandCase.NODE_INFO) {
      return Response.newBuilder().setNode(nodeInfo()).build();
    }
    return state.read(
        s ->
            switch (request.getCommandCase()) {
              case READ ->
                  WireCodec.toResponse(
                      s.read(request.getRead().getResource(), request.getRead().getKey()));
              case LEASE -> WireCodec.toResponse(s.lease(request.getLease().getResource()));
              case VALIDATE ->
                  WireCodec.toResponse(
                      s.validateToken(
                          request.getValidate().getResource(), request.getValidate().getToken()));
              case LIST -> listing(s, request.getList());
              default -> WireCodec.invalid("commands must be sent as writes, not reads");
            });
  }

  private NodeInfo nodeInfo() {
    NodeInfo.Builder b =
        NodeInfo.newBuilder()
            .setPid(ProcessHandle.current().pid())
            .setMetricsPort(Math.max(0, metrics.httpPort()))
            .setLimits(
                ServerLimits.newBuilder()
                    .setMaxResourceBytes(limits.maxResourceBytes())
                    .setMaxKeyBytes(limits.maxKeyBytes())
                    .setMaxOwnerBytes(limits.maxOwnerBytes())
                    .setMaxValueBytes(limits.maxValueBytes())
                    .setMaxRequestsPerBatch(limits.maxRequestsPerBatch())
                    .setMinTtlMs(limits.minTtl().toMillis())
                    .setMaxTtlMs(limits.maxTtl().toMillis())
                    .setMaxMessageBytes(limits.maxRequestMessageBytes()))
            .setClientAddress(clientAddress)
            .setClusterId(clusterId.get());
    b.setSnapshotIndex(snapshotIndex.getAsLong());
    try {
      RaftServer.Division d = division.division();
      if (d != null) {
        RaftPeerId leader = d.getInfo().getLeaderId();
        b.setId(d.getId().toString())
            .setAddress(d.getPeer().getAddress())
            .setRole(d.getInfo().getCurrentRole().name())
            .setTerm(d.getInfo().getCurrentTerm())
            .setLastAppliedIndex(d.getInfo().getLastAppliedIndex())
            .setCommitIndex(d.getRaftLog().getLastCommittedIndex())
            .setLeaderId(leader == null ? "" : leader.toString())
            .setLogSizeBytes(
                StorageFiles.logSizeBytes(d.getRaftStorage().getStorageDir().getCurrentDir()));
        if (d.getInfo().isLeader()) {
          for (FollowerLag f : metrics.followers()) {
            b.addFollowers(
                FollowerProgress.newBuilder()
                    .setId(f.peer())
                    .setMatchIndex(f.matchIndex())
                    .setLagEntries(f.lagEntries())
                    .setLagSeconds(f.lagSeconds())
                    .setLagging(f.lagging()));
          }
        }
      }
    } catch (IOException e) {
      b.setRole("UNKNOWN");
    }
    return b.build();
  }

  /** One page of an operator listing, read from {@code state} under the caller's read lock. */
  static Response listing(FencingState state, ListRequest list) {
    int limit = list.getLimit() <= 0 ? DEFAULT_PAGE : Math.min(list.getLimit(), MAX_PAGE);
    Response.Builder b = Response.newBuilder().setCode(ResultCode.FOUND).setNowMs(state.nowMs());
    if (list.getWhat() == ListRequest.What.KEYS) {
      if (list.getResource().isEmpty()) {
        return WireCodec.invalid("resource: required to list keys");
      }
      List<Map.Entry<String, ValueRecord>> keys =
          state.listKeys(list.getResource(), list.getPrefix(), list.getAfter(), limit + 1);
      for (Map.Entry<String, ValueRecord> e : keys.subList(0, Math.min(limit, keys.size()))) {
        ValueRecord v = e.getValue();
        b.addEntries(
            ListEntry.newBuilder()
                .setResource(list.getResource())
                .setKey(e.getKey())
                .setAcceptedToken(v.acceptedToken())
                .setVersion(v.version())
                .setValueBytes(v.value().length)
                .setWrittenAtMs(v.writtenAtMs()));
      }
      return b.setMore(keys.size() > limit).build();
    }
    List<ResourceRecord> resources =
        state.listResources(list.getPrefix(), list.getAfter(), limit + 1);
    for (ResourceRecord r : resources.subList(0, Math.min(limit, resources.size()))) {
      ListEntry.Builder e =
          ListEntry.newBuilder()
              .setResource(r.name())
              .setCurrentToken(r.lastToken())
              .setWaiters(r.waiters().size());
      LeaseRecord live = r.liveLease(state.nowMs());
      if (live != null) {
        e.setToken(live.token())
            .setOwner(live.owner())
            .setExpiresAtMs(live.expiresAtMs())
            .setLive(true);
      }
      b.addEntries(e);
    }
    return b.setMore(resources.size() > limit).build();
  }
}
