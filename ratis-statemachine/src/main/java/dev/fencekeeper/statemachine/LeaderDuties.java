package dev.fencekeeper.statemachine;

/** What a node does when it becomes leader or stops being one; only ever proposes log entries. */
public interface LeaderDuties {
  LeaderDuties NONE =
      new LeaderDuties() {
        @Override
        public void onLeaderReady() {}

        @Override
        public void onNotLeader() {}
      };

  void onLeaderReady();

  void onNotLeader();

  /**
   * Every replica, on the apply thread under the write lock: the entry just applied (or the state
   * just loaded) moved the earliest deadline of the state earlier, to {@code deadlineMs}. A
   * leader's expiry ticker must wake by then; the call must return at once.
   */
  default void deadlineMovedEarlier(long deadlineMs) {}
}
