package dev.fencekeeper.core;

/**
 * The answer to a command or query: a {@link Code} plus the context a caller needs to act on it or
 * to diagnose a rejection (the token it sent, the newest token, the holder's owner label).
 * Immutable; the value bytes are never mutated after construction.
 *
 * <p>Fields that do not apply to a code are zero, empty or false.
 */
public final class Outcome {
  private static final byte[] NO_BYTES = new byte[0];

  private final Code code;
  private final String message;
  private final long token;
  private final long currentToken;
  private final String holderOwner;
  private final long expiresAtMs;
  private final long sentToken;
  private final boolean alreadyEnded;
  private final byte[] value;
  private final long acceptedToken;
  private final long version;
  private final long writtenAtMs;
  private final String key;
  private final long nowMs;
  private final long ttlMs;
  private final boolean live;
  private final int position;
  private final long queuedAtIndex;
  private final int renewed;
  private final Facts facts;

  private Outcome(Builder b) {
    code = b.code;
    message = b.message;
    token = b.token;
    currentToken = b.currentToken;
    holderOwner = b.holderOwner;
    expiresAtMs = b.expiresAtMs;
    sentToken = b.sentToken;
    alreadyEnded = b.alreadyEnded;
    value = b.value;
    acceptedToken = b.acceptedToken;
    version = b.version;
    writtenAtMs = b.writtenAtMs;
    key = b.key;
    nowMs = b.nowMs;
    ttlMs = b.ttlMs;
    live = b.live;
    position = b.position;
    queuedAtIndex = b.queuedAtIndex;
    renewed = b.renewed;
    facts = b.facts;
  }

  public static Builder of(Code code) {
    return new Builder(code);
  }

  public static Outcome invalid(String message) {
    return of(Code.INVALID_ARGUMENT).message(message).build();
  }

  public Code code() {
    return code;
  }

  public String message() {
    return message;
  }

  public long token() {
    return token;
  }

  public long currentToken() {
    return currentToken;
  }

  public String holderOwner() {
    return holderOwner;
  }

  public long expiresAtMs() {
    return expiresAtMs;
  }

  public long sentToken() {
    return sentToken;
  }

  public boolean alreadyEnded() {
    return alreadyEnded;
  }

  /** The stored bytes; callers must not modify the array. */
  public byte[] value() {
    return value;
  }

  public long acceptedToken() {
    return acceptedToken;
  }

  public long version() {
    return version;
  }

  public long writtenAtMs() {
    return writtenAtMs;
  }

  public String key() {
    return key;
  }

  public long nowMs() {
    return nowMs;
  }

  public long ttlMs() {
    return ttlMs;
  }

  public boolean live() {
    return live;
  }

  /** For WAITING: the place in line, 1 being next. */
  public int position() {
    return position;
  }

  /** For WAITING: the log index of the entry that answered it (0 otherwise). */
  public long queuedAtIndex() {
    return queuedAtIndex;
  }

  /** A session renewal: how many live leases of the session it extended. */
  public int renewed() {
    return renewed;
  }

  /**
   * What applying the command did beyond its answer, for observers (the node's metrics); never on
   * the wire, so two answers that differ only here are the same answer to the caller.
   */
  public Facts facts() {
    return facts;
  }

  /**
   * Facts the core reports about how it reached an outcome, so that observers need not re-derive
   * its rules.
   *
   * @param deduplicated a write answered from its receipt: a retry of one already applied, which
   *     changed nothing
   * @param requeued an acquire whose request id was already queued: the waiter stays in line, it is
   *     not a new wait
   * @param storedKeysDelta how many protected keys the state gained (negative: lost)
   * @param storedBytesDelta how many value bytes the state gained (negative: lost)
   */
  public record Facts(
      boolean deduplicated, boolean requeued, long storedKeysDelta, long storedBytesDelta) {
    public static final Facts NONE = new Facts(false, false, 0, 0);
  }

  public Builder toBuilder() {
    return new Builder(code)
        .message(message)
        .token(token)
        .currentToken(currentToken)
        .holderOwner(holderOwner)
        .expiresAtMs(expiresAtMs)
        .sentToken(sentToken)
        .alreadyEnded(alreadyEnded)
        .value(value)
        .acceptedToken(acceptedToken)
        .version(version)
        .writtenAtMs(writtenAtMs)
        .key(key)
        .nowMs(nowMs)
        .ttlMs(ttlMs)
        .live(live)
        .position(position)
        .queuedAtIndex(queuedAtIndex)
        .renewed(renewed)
        .facts(facts);
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder(code.name());
    if (token != 0) s.append(" token=").append(token);
    if (currentToken != 0) s.append(" currentToken=").append(currentToken);
    if (sentToken != 0) s.append(" sentToken=").append(sentToken);
    if (!holderOwner.isEmpty()) s.append(" holderOwner=").append(holderOwner);
    if (expiresAtMs != 0) s.append(" expiresAtMs=").append(expiresAtMs);
    if (alreadyEnded) s.append(" alreadyEnded");
    if (acceptedToken != 0) s.append(" acceptedToken=").append(acceptedToken);
    if (version != 0) s.append(" version=").append(version);
    if (!key.isEmpty()) s.append(" key=").append(key);
    if (position != 0) s.append(" position=").append(position);
    if (queuedAtIndex != 0) s.append(" queuedAtIndex=").append(queuedAtIndex);
    if (renewed != 0) s.append(" renewed=").append(renewed);
    if (!message.isEmpty()) s.append(" (").append(message).append(')');
    return s.toString();
  }

  /** Builds an {@link Outcome}; unset fields stay zero or empty. */
  public static final class Builder {
    private final Code code;
    private String message = "";
    private long token;
    private long currentToken;
    private String holderOwner = "";
    private long expiresAtMs;
    private long sentToken;
    private boolean alreadyEnded;
    private byte[] value = NO_BYTES;
    private long acceptedToken;
    private long version;
    private long writtenAtMs;
    private String key = "";
    private long nowMs;
    private long ttlMs;
    private boolean live;
    private int position;
    private long queuedAtIndex;
    private int renewed;
    private Facts facts = Facts.NONE;

    private Builder(Code code) {
      this.code = code;
    }

    public Builder message(String v) {
      message = v == null ? "" : v;
      return this;
    }

    public Builder token(long v) {
      token = v;
      return this;
    }

    public Builder currentToken(long v) {
      currentToken = v;
      return this;
    }

    public Builder holderOwner(String v) {
      holderOwner = v == null ? "" : v;
      return this;
    }

    public Builder expiresAtMs(long v) {
      expiresAtMs = v;
      return this;
    }

    public Builder sentToken(long v) {
      sentToken = v;
      return this;
    }

    public Builder alreadyEnded(boolean v) {
      alreadyEnded = v;
      return this;
    }

    public Builder value(byte[] v) {
      value = v == null ? NO_BYTES : v;
      return this;
    }

    public Builder acceptedToken(long v) {
      acceptedToken = v;
      return this;
    }

    public Builder version(long v) {
      version = v;
      return this;
    }

    public Builder writtenAtMs(long v) {
      writtenAtMs = v;
      return this;
    }

    public Builder key(String v) {
      key = v == null ? "" : v;
      return this;
    }

    public Builder nowMs(long v) {
      nowMs = v;
      return this;
    }

    public Builder ttlMs(long v) {
      ttlMs = v;
      return this;
    }

    public Builder live(boolean v) {
      live = v;
      return this;
    }

    public Builder position(int v) {
      position = v;
      return this;
    }

    public Builder queuedAtIndex(long v) {
      queuedAtIndex = v;
      return this;
    }

    public Builder renewed(int v) {
      renewed = v;
      return this;
    }

    public Builder facts(Facts v) {
      facts = v == null ? Facts.NONE : v;
      return this;
    }

    public Outcome build() {
      return new Outcome(this);
    }
  }
}
