package dev.fencekeeper.config;

/**
 * What a node's client port holds open for one client identity, and for one stream, before it
 * answers OVERLOADED (docs/protocol.md, Limits). Watches are bounded per identity by {@link
 * Limits#maxWatchesPerClient()}.
 *
 * @param maxSessionsPerClient Session streams one identity may hold open on the leader ({@code
 *     limits.sessions-per-client.max}); without TLS every client shares the one empty identity
 * @param maxBufferedMessages messages queued for one stream whose client does not read them: more
 *     for 2 s, or four times as many at any moment, and the stream is cut off with OVERLOADED
 *     ({@code limits.stream-buffer.max})
 */
public record StreamLimits(int maxSessionsPerClient, int maxBufferedMessages) {
  public StreamLimits {
    Keys.SESSIONS_PER_CLIENT_MAX.check(maxSessionsPerClient);
    Keys.STREAM_BUFFER_MAX.check(maxBufferedMessages);
  }

  /** The defaults of both keys. */
  public static StreamLimits defaults() {
    return new StreamLimits(
        Keys.SESSIONS_PER_CLIENT_MAX.defaultValue(), Keys.STREAM_BUFFER_MAX.defaultValue());
  }
}
