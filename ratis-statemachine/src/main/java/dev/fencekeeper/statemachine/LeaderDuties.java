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
}
