package dev.fencekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.metrics.RatisNames.Converted;
import dev.fencekeeper.metrics.RatisNames.Kind;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The one rule that turns a mirrored Ratis metric into a Prometheus family and labels. */
class RatisNamesTest {
  private static final Set<String> PEERS = Set.of("n1", "n2", "n10");

  private static Converted convert(String name, String type) {
    return RatisNames.convert(name, type, PEERS);
  }

  // Guarantee: a peer id Ratis writes into a name (first, or after follower_) becomes the peer
  // label, and the family is the same for every peer; ids that are prefixes of others do not mix.
  @Test
  void peerIdsBecomeALabel() {
    assertThat(convert("ratis.log_appender.follower_n2_match_index", "gauge"))
        .isEqualTo(new Converted("ratis_log_appender_follower_match_index", Kind.GAUGE, "n2", 1));
    assertThat(convert("ratis.log_appender.follower_n10_match_index", "gauge").peer())
        .isEqualTo("n10");
    assertThat(convert("ratis.server.n1_peerCommitIndex", "gauge"))
        .isEqualTo(new Converted("ratis_server_peer_commit_index", Kind.GAUGE, "n1", 1));
    assertThat(convert("ratis_grpc.log_appender.n2_success_reply_count", "counter"))
        .isEqualTo(
            new Converted("ratis_grpc_log_appender_success_reply_count", Kind.COUNTER, "n2", 1));
    // Not a peer: follower_append_entry_latency is the follower's own timer.
    assertThat(convert("ratis.server.follower_append_entry_latency", "timer"))
        .isEqualTo(
            new Converted(
                "ratis_server_follower_append_entry_latency_seconds", Kind.SUMMARY, null, 1e9));
  }

  // Guarantee: units are in names: timers are seconds, and gauges Ratis keeps in milliseconds
  // (names ending in time) are divided by 1000 and end in _seconds.
  @Test
  void unitsAreInNames() {
    assertThat(convert("ratis.log_worker.flushTime", "timer"))
        .isEqualTo(new Converted("ratis_log_worker_flush_time_seconds", Kind.SUMMARY, null, 1e9));
    assertThat(convert("ratis.log_appender.follower_n1_rpc_response_time", "gauge"))
        .isEqualTo(
            new Converted(
                "ratis_log_appender_follower_rpc_response_time_seconds", Kind.GAUGE, "n1", 1000));
    assertThat(convert("ratis.leader_election.lastLeaderElapsedTime", "gauge").family())
        .isEqualTo("ratis_leader_election_last_leader_elapsed_time_seconds");
    assertThat(convert("ratis.server.n2_lastHeartbeatElapsedTime", "gauge"))
        .isEqualTo(
            new Converted(
                "ratis_server_last_heartbeat_elapsed_time_seconds", Kind.GAUGE, "n2", 1000));
  }

  // Guarantee: no gauge ends in _count: the retry cache's cumulative counts are counters, its size
  // a plain gauge, and any other count-named gauge loses the suffix; counters never carry _total
  // twice.
  @Test
  void gaugesNeverEndInCount() {
    assertThat(convert("ratis.server.retryCacheHitCount", "gauge"))
        .isEqualTo(new Converted("ratis_server_retry_cache_hits", Kind.COUNTER, null, 1));
    assertThat(convert("ratis.server.retryCacheMissCount", "gauge"))
        .isEqualTo(new Converted("ratis_server_retry_cache_misses", Kind.COUNTER, null, 1));
    assertThat(convert("ratis.server.retryCacheEntryCount", "gauge"))
        .isEqualTo(new Converted("ratis_server_retry_cache_entries", Kind.GAUGE, null, 1));
    assertThat(convert("ratis_grpc.log_appender.n1_pending_log_requests_count", "gauge"))
        .isEqualTo(
            new Converted("ratis_grpc_log_appender_pending_log_requests", Kind.GAUGE, "n1", 1));
    assertThat(
            convert(
                    "ratis.server_message_metrics.n1_ratis.grpc.RaftServerProtocolService_appendEntries_OK_completed_total",
                    "counter")
                .family())
        .isEqualTo(
            "ratis_server_message_metrics_ratis_grpc_raft_server_protocol_service_append_entries_ok_completed");
  }

  @Test
  void snakeCase() {
    assertThat(RatisNames.snake("ratis.state_machine.appliedIndex"))
        .isEqualTo("ratis_state_machine_applied_index");
    assertThat(RatisNames.snake("ratis.server.numWatch-ALL_COMMITTEDRequestTimeout"))
        .isEqualTo("ratis_server_num_watch_all_committed_request_timeout");
  }
}
