package dev.fencekeeper.metrics;

import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.ResourceRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.statemachine.SnapshotInfo;

/**
 * The gauges that read the node's Raft division and its replicated state: registered when the
 * node's metrics are made, without a value until {@link #bind} gives them their sources.
 *
 * <p>Cost: live leases, waiters and resources come from one pass over the resource records (never
 * over keys) under the state machine's read lock, cached for {@link #CENSUS_TTL_NANOS} so that one
 * scrape makes one pass; keys and stored bytes are kept per write ({@link StoredValues}); the Raft
 * and snapshot gauges read Ratis's division and take no lock.
 */
final class NodeGauges {
  /** How long one pass over the resources serves the gauges. */
  private static final long CENSUS_TTL_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  /** The node's Raft server, its group, and how to read its state machine. */
  record Binding(RaftServer server, RaftGroupId groupId, StateReader stateMachine) {
    /** The node's division, or empty while it is not running. */
    Optional<RaftServer.Division> division() {
      try {
        return Optional.ofNullable(server.getDivision(groupId));
      } catch (IOException e) {
        return Optional.empty();
      }
    }
  }

  /** One pass over the resources: O(resources), never O(keys). */
  private record Census(long liveLeases, long waiters, long resources, long takenAtNanos) {}

  private final StoredValues stored = new StoredValues();
  private final Set<String> peers = ConcurrentHashMap.newKeySet();
  private volatile Binding binding;
  private volatile Census census;

  NodeGauges(String nodeId, NodeSeries series) {
    peers.add(nodeId);
    series.gauge(NodeMetric.LEASES_LIVE, () -> census().map(Census::liveLeases).orElse(null));
    series.gauge(NodeMetric.WAITERS, () -> census().map(Census::waiters).orElse(null));
    series.gauge(NodeMetric.RESOURCES, () -> census().map(Census::resources).orElse(null));
    series.gauge(NodeMetric.KEYS, () -> storedFigure(StoredValues::keys));
    series.gauge(NodeMetric.STORED_BYTES, () -> storedFigure(StoredValues::bytes));
    series.gauge(NodeMetric.TERM, () -> division(d -> d.getInfo().getCurrentTerm()));
    series.gauge(
        NodeMetric.LEADER_KNOWN, () -> division(d -> d.getInfo().getLeaderId() != null ? 1L : 0L));
    series.gauge(NodeMetric.LEADING, () -> division(d -> d.getInfo().isLeader() ? 1L : 0L));
    series.gauge(NodeMetric.APPLIED_INDEX, () -> division(d -> d.getInfo().getLastAppliedIndex()));
    series.gauge(
        NodeMetric.COMMIT_INDEX, () -> division(d -> d.getRaftLog().getLastCommittedIndex()));
    series.gauge(
        NodeMetric.SNAPSHOT_INDEX, () -> snapshot().map(SnapshotInfo::getIndex).orElse(null));
    series.gauge(
        NodeMetric.SNAPSHOT_TIMESTAMP,
        () -> snapshot().flatMap(NodeGauges::snapshotTimestampSeconds).orElse(null));
  }

  void bind(Binding binding) {
    this.binding = binding;
  }

  Binding binding() {
    return binding;
  }

  /** Every write the state machine applied: keeps the stored keys and bytes current. */
  void applied(dev.fencekeeper.core.Outcome.Facts facts) {
    stored.applied(facts);
  }

  /**
   * Every peer id this node's group has had while this node ran (and this node's own): Ratis writes
   * them into the names of some of its metrics.
   */
  Set<String> peers() {
    Binding b = binding;
    if (b != null) {
      b.division()
          .ifPresent(
              d -> {
                for (RaftPeer p : d.getRaftConf().getAllPeers()) {
                  peers.add(p.getId().toString());
                }
              });
    }
    return Set.copyOf(peers);
  }

  private Long storedFigure(Function<StoredValues, Long> figure) {
    return readState(
            state -> {
              stored.track(state);
              return figure.apply(stored);
            })
        .orElse(null);
  }

  private Optional<Census> census() {
    Census c = census;
    if (c != null && System.nanoTime() - c.takenAtNanos() < CENSUS_TTL_NANOS) {
      return Optional.of(c);
    }
    Optional<Census> fresh =
        readState(
            state -> {
              long live = 0;
              long waiting = 0;
              long now = state.nowMs();
              for (ResourceRecord r : state.resources().values()) {
                if (r.liveLease(now) != null) {
                  live++;
                }
                waiting += r.waiters().size();
              }
              return new Census(live, waiting, state.resources().size(), System.nanoTime());
            });
    fresh.ifPresent(value -> census = value);
    return fresh;
  }

  /** Runs {@code reader} under the state machine's read lock; empty before {@link #bind}. */
  private <T> Optional<T> readState(Function<FencingState, T> reader) {
    Binding b = binding;
    return b == null ? Optional.empty() : Optional.ofNullable(b.stateMachine().read(reader));
  }

  private Optional<SnapshotInfo> snapshot() {
    Binding b = binding;
    return b == null
        ? Optional.empty()
        : b.division().map(d -> d.getStateMachine().getLatestSnapshot());
  }

  /** The modification time of the snapshot's first file: when this node wrote or installed it. */
  private static Optional<Long> snapshotTimestampSeconds(SnapshotInfo info) {
    List<FileInfo> files = info.getFiles();
    if (files == null || files.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(Files.getLastModifiedTime(files.get(0).getPath()).toMillis() / 1000);
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private Long division(Function<RaftServer.Division, Long> reader) {
    Binding b = binding;
    return b == null ? null : b.division().map(reader).orElse(null);
  }
}
