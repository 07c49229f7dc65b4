package dev.fencekeeper.statemachine;

/**
 * What a leader's takeover entry said about it: the Raft {@code term} it leads and the {@code
 * clientAddress} (host:port) its client port listens on. Followers redirect clients there while
 * that term lasts.
 */
public record LeaderAnnouncement(long term, String clientAddress) {
  /** Nothing announced yet (or only by entries written before announcements existed). */
  public static final LeaderAnnouncement NONE = new LeaderAnnouncement(-1, "");
}
