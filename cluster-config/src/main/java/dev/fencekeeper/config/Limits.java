package dev.fencekeeper.config;

import java.time.Duration;

/**
 * Bounds the state machine enforces on every command, so one client cannot make a replica hold
 * unbounded data. Byte limits count UTF-8 bytes. Every instance is valid: the constructor rejects
 * what the state machine could not honour, naming the config key in the {@link ConfigException}.
 *
 * @param minTtl shortest lease TTL a client may ask for ({@code lease.ttl.min})
 * @param maxTtl longest lease TTL ({@code lease.ttl.max})
 * @param takeoverGrace extension a new leader grants every live lease, capped by the lease's own
 *     TTL ({@code lease.takeover-grace})
 * @param maxResourceBytes resource (lock) name length ({@code limits.resource-name.max-bytes})
 * @param maxKeyBytes protected value key length ({@code limits.key.max-bytes})
 * @param maxOwnerBytes owner label length ({@code limits.owner.max-bytes})
 * @param maxValueBytes one protected value, and all values of one write together, since a write is
 *     one log entry ({@code limits.value.max-bytes})
 * @param maxKeysPerWrite keys changed by one atomic write ({@code limits.keys-per-write.max})
 * @param maxRequestIdBytes write request id length ({@code limits.request-id.max-bytes})
 * @param maxRequestIdsPerLease request ids remembered per lease for deduplication ({@code
 *     limits.request-ids-per-lease.max})
 * @param idleTimeout how long a resource with no lease, waiters or values is kept before it is
 *     forgotten; the token sequence is group-wide, so forgetting never lets a token go backwards
 *     ({@code resources.idle-timeout})
 * @param waiterLiveness how long a queued acquire stays eligible without its client re-sending it
 *     ({@code lease.waiter-liveness})
 * @param maxWaitersPerResource queued acquires per resource ({@code
 *     limits.waiters-per-resource.max})
 * @param maxKeysPerResource protected values one resource may hold ({@code
 *     limits.keys-per-resource.max})
 * @param maxResources resources the cluster keeps at once; an acquire that would create one more is
 *     refused with OVERLOADED ({@code limits.resources.max})
 * @param maxWatchesPerClient watches one client identity may have waiting on a node at once ({@code
 *     limits.watches-per-client.max}); without TLS every client shares the one empty identity
 * @param maxRequestsPerBatch commands one batch (one log entry) may carry ({@code
 *     limits.requests-per-batch.max}); their values together are bounded like one write's
 */
public record Limits(
    Duration minTtl,
    Duration maxTtl,
    Duration takeoverGrace,
    int maxResourceBytes,
    int maxKeyBytes,
    int maxOwnerBytes,
    int maxValueBytes,
    int maxKeysPerWrite,
    int maxRequestIdBytes,
    int maxRequestIdsPerLease,
    Duration idleTimeout,
    Duration waiterLiveness,
    int maxWaitersPerResource,
    int maxKeysPerResource,
    int maxResources,
    int maxWatchesPerClient,
    int maxRequestsPerBatch) {
  public static final int DEFAULT_MAX_KEYS_PER_RESOURCE = Keys.KEYS_PER_RESOURCE_MAX.defaultValue();
  public static final int DEFAULT_MAX_RESOURCES = Keys.RESOURCES_MAX.defaultValue();
  public static final int DEFAULT_MAX_WATCHES_PER_CLIENT =
      Keys.WATCHES_PER_CLIENT_MAX.defaultValue();
  public static final int DEFAULT_MAX_REQUESTS_PER_BATCH =
      Keys.REQUESTS_PER_BATCH_MAX.defaultValue();

  /**
   * Limits with the default batch size.
   *
   * @deprecated name each limit on {@link #builder()}, which starts from the defaults
   */
  @Deprecated(since = "0.1.0", forRemoval = true)
  public Limits(
      Duration minTtl,
      Duration maxTtl,
      Duration takeoverGrace,
      int maxResourceBytes,
      int maxKeyBytes,
      int maxOwnerBytes,
      int maxValueBytes,
      int maxKeysPerWrite,
      int maxRequestIdBytes,
      int maxRequestIdsPerLease,
      Duration idleTimeout,
      Duration waiterLiveness,
      int maxWaitersPerResource,
      int maxKeysPerResource,
      int maxResources,
      int maxWatchesPerClient) {
    this(
        minTtl,
        maxTtl,
        takeoverGrace,
        maxResourceBytes,
        maxKeyBytes,
        maxOwnerBytes,
        maxValueBytes,
        maxKeysPerWrite,
        maxRequestIdBytes,
        maxRequestIdsPerLease,
        idleTimeout,
        waiterLiveness,
        maxWaitersPerResource,
        maxKeysPerResource,
        maxResources,
        maxWatchesPerClient,
        DEFAULT_MAX_REQUESTS_PER_BATCH);
  }

  /**
   * Limits with the default key, resource and watch counts.
   *
   * @deprecated name each limit on {@link #builder()}, which starts from the defaults
   */
  @Deprecated(since = "0.1.0", forRemoval = true)
  public Limits(
      Duration minTtl,
      Duration maxTtl,
      Duration takeoverGrace,
      int maxResourceBytes,
      int maxKeyBytes,
      int maxOwnerBytes,
      int maxValueBytes,
      int maxKeysPerWrite,
      int maxRequestIdBytes,
      int maxRequestIdsPerLease,
      Duration idleTimeout,
      Duration waiterLiveness,
      int maxWaitersPerResource) {
    this(
        minTtl,
        maxTtl,
        takeoverGrace,
        maxResourceBytes,
        maxKeyBytes,
        maxOwnerBytes,
        maxValueBytes,
        maxKeysPerWrite,
        maxRequestIdBytes,
        maxRequestIdsPerLease,
        idleTimeout,
        waiterLiveness,
        maxWaitersPerResource,
        DEFAULT_MAX_KEYS_PER_RESOURCE,
        DEFAULT_MAX_RESOURCES,
        DEFAULT_MAX_WATCHES_PER_CLIENT);
  }

  /**
   * Limits with the default idle timeout, waiter liveness and waiter count.
   *
   * @deprecated name each limit on {@link #builder()}, which starts from the defaults
   */
  @Deprecated(since = "0.1.0", forRemoval = true)
  public Limits(
      Duration minTtl,
      Duration maxTtl,
      Duration takeoverGrace,
      int maxResourceBytes,
      int maxKeyBytes,
      int maxOwnerBytes,
      int maxValueBytes,
      int maxKeysPerWrite,
      int maxRequestIdBytes,
      int maxRequestIdsPerLease) {
    this(
        minTtl,
        maxTtl,
        takeoverGrace,
        maxResourceBytes,
        maxKeyBytes,
        maxOwnerBytes,
        maxValueBytes,
        maxKeysPerWrite,
        maxRequestIdBytes,
        maxRequestIdsPerLease,
        Keys.RESOURCES_IDLE_TIMEOUT.defaultValue(),
        Keys.LEASE_WAITER_LIVENESS.defaultValue(),
        Keys.WAITERS_PER_RESOURCE_MAX.defaultValue());
  }

  public Limits {
    Keys.LEASE_TTL_MIN.check(minTtl);
    Keys.LEASE_TTL_MAX.check(maxTtl);
    Keys.LEASE_TAKEOVER_GRACE.check(takeoverGrace);
    if (minTtl.compareTo(maxTtl) > 0) {
      throw new ConfigException(
          Keys.LEASE_TTL_MIN
              + ": '"
              + Durations.describe(minTtl)
              + "' is greater than "
              + Keys.LEASE_TTL_MAX
              + " '"
              + Durations.describe(maxTtl)
              + "'");
    }
    Keys.RESOURCE_NAME_MAX_BYTES.check(maxResourceBytes);
    Keys.KEY_MAX_BYTES.check(maxKeyBytes);
    Keys.OWNER_MAX_BYTES.check(maxOwnerBytes);
    Keys.VALUE_MAX_BYTES.check(maxValueBytes);
    Keys.KEYS_PER_WRITE_MAX.check(maxKeysPerWrite);
    Keys.REQUEST_ID_MAX_BYTES.check(maxRequestIdBytes);
    Keys.REQUEST_IDS_PER_LEASE_MAX.check(maxRequestIdsPerLease);
    Keys.RESOURCES_IDLE_TIMEOUT.check(idleTimeout);
    Keys.LEASE_WAITER_LIVENESS.check(waiterLiveness);
    Keys.WAITERS_PER_RESOURCE_MAX.check(maxWaitersPerResource);
    Keys.KEYS_PER_RESOURCE_MAX.check(maxKeysPerResource);
    Keys.RESOURCES_MAX.check(maxResources);
    Keys.WATCHES_PER_CLIENT_MAX.check(maxWatchesPerClient);
    Keys.REQUESTS_PER_BATCH_MAX.check(maxRequestsPerBatch);
  }

  public Limits withMaxResources(int max) {
    return toBuilder().maxResources(max).build();
  }

  public Limits withMaxKeysPerResource(int max) {
    return toBuilder().maxKeysPerResource(max).build();
  }

  public Limits withMaxRequestsPerBatch(int max) {
    return toBuilder().maxRequestsPerBatch(max).build();
  }

  /** Room a request needs besides its values: names, keys, ids and framing. */
  public static final int MESSAGE_OVERHEAD_BYTES = 1 << 20;

  /**
   * The largest request message a node's client port accepts: the values one entry may carry
   * ({@link #maxValueBytes()}) plus {@link #MESSAGE_OVERHEAD_BYTES}. gRPC refuses a longer one
   * before fencekeeper sees it.
   */
  public int maxRequestMessageBytes() {
    return (int) Math.min(Integer.MAX_VALUE, (long) maxValueBytes + MESSAGE_OVERHEAD_BYTES);
  }

  /** The limits a configuration's values set (each key's default where none is given). */
  static Limits of(java.util.Map<ConfigKey<?>, Object> values) {
    return new Limits(
        Keys.LEASE_TTL_MIN.valueIn(values),
        Keys.LEASE_TTL_MAX.valueIn(values),
        Keys.LEASE_TAKEOVER_GRACE.valueIn(values),
        Keys.RESOURCE_NAME_MAX_BYTES.valueIn(values),
        Keys.KEY_MAX_BYTES.valueIn(values),
        Keys.OWNER_MAX_BYTES.valueIn(values),
        Keys.VALUE_MAX_BYTES.valueIn(values),
        Keys.KEYS_PER_WRITE_MAX.valueIn(values),
        Keys.REQUEST_ID_MAX_BYTES.valueIn(values),
        Keys.REQUEST_IDS_PER_LEASE_MAX.valueIn(values),
        Keys.RESOURCES_IDLE_TIMEOUT.valueIn(values),
        Keys.LEASE_WAITER_LIVENESS.valueIn(values),
        Keys.WAITERS_PER_RESOURCE_MAX.valueIn(values),
        Keys.KEYS_PER_RESOURCE_MAX.valueIn(values),
        Keys.RESOURCES_MAX.valueIn(values),
        Keys.WATCHES_PER_CLIENT_MAX.valueIn(values),
        Keys.REQUESTS_PER_BATCH_MAX.valueIn(values));
  }

  /** Every limit at its key's default (docs/configuration.md). */
  public static Limits defaults() {
    return builder().build();
  }

  /** A builder starting from every limit at its key's default. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder starting from these limits. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.minTtl = minTtl;
    b.maxTtl = maxTtl;
    b.takeoverGrace = takeoverGrace;
    b.maxResourceBytes = maxResourceBytes;
    b.maxKeyBytes = maxKeyBytes;
    b.maxOwnerBytes = maxOwnerBytes;
    b.maxValueBytes = maxValueBytes;
    b.maxKeysPerWrite = maxKeysPerWrite;
    b.maxRequestIdBytes = maxRequestIdBytes;
    b.maxRequestIdsPerLease = maxRequestIdsPerLease;
    b.idleTimeout = idleTimeout;
    b.waiterLiveness = waiterLiveness;
    b.maxWaitersPerResource = maxWaitersPerResource;
    b.maxKeysPerResource = maxKeysPerResource;
    b.maxResources = maxResources;
    b.maxWatchesPerClient = maxWatchesPerClient;
    b.maxRequestsPerBatch = maxRequestsPerBatch;
    return b;
  }

  /** Durations in config syntax ("100ms", not "PT0.1S"), since this ends up in startup logs. */
  @Override
  public String toString() {
    return "Limits[minTtl="
        + Durations.describe(minTtl)
        + ", maxTtl="
        + Durations.describe(maxTtl)
        + ", takeoverGrace="
        + Durations.describe(takeoverGrace)
        + ", maxResourceBytes="
        + maxResourceBytes
        + ", maxKeyBytes="
        + maxKeyBytes
        + ", maxOwnerBytes="
        + maxOwnerBytes
        + ", maxValueBytes="
        + maxValueBytes
        + ", maxKeysPerWrite="
        + maxKeysPerWrite
        + ", maxRequestIdBytes="
        + maxRequestIdBytes
        + ", maxRequestIdsPerLease="
        + maxRequestIdsPerLease
        + ", idleTimeout="
        + Durations.describe(idleTimeout)
        + ", waiterLiveness="
        + Durations.describe(waiterLiveness)
        + ", maxWaitersPerResource="
        + maxWaitersPerResource
        + ", maxKeysPerResource="
        + maxKeysPerResource
        + ", maxResources="
        + maxResources
        + ", maxWatchesPerClient="
        + maxWatchesPerClient
        + ", maxRequestsPerBatch="
        + maxRequestsPerBatch
        + "]";
  }

  /**
   * Limits by name, each starting at its key's default; {@link #build} checks them as the
   * constructor does.
   */
  public static final class Builder {
    private Duration minTtl = Keys.LEASE_TTL_MIN.defaultValue();
    private Duration maxTtl = Keys.LEASE_TTL_MAX.defaultValue();
    private Duration takeoverGrace = Keys.LEASE_TAKEOVER_GRACE.defaultValue();
    private int maxResourceBytes = Keys.RESOURCE_NAME_MAX_BYTES.defaultValue();
    private int maxKeyBytes = Keys.KEY_MAX_BYTES.defaultValue();
    private int maxOwnerBytes = Keys.OWNER_MAX_BYTES.defaultValue();
    private int maxValueBytes = Keys.VALUE_MAX_BYTES.defaultValue();
    private int maxKeysPerWrite = Keys.KEYS_PER_WRITE_MAX.defaultValue();
    private int maxRequestIdBytes = Keys.REQUEST_ID_MAX_BYTES.defaultValue();
    private int maxRequestIdsPerLease = Keys.REQUEST_IDS_PER_LEASE_MAX.defaultValue();
    private Duration idleTimeout = Keys.RESOURCES_IDLE_TIMEOUT.defaultValue();
    private Duration waiterLiveness = Keys.LEASE_WAITER_LIVENESS.defaultValue();
    private int maxWaitersPerResource = Keys.WAITERS_PER_RESOURCE_MAX.defaultValue();
    private int maxKeysPerResource = Keys.KEYS_PER_RESOURCE_MAX.defaultValue();
    private int maxResources = Keys.RESOURCES_MAX.defaultValue();
    private int maxWatchesPerClient = Keys.WATCHES_PER_CLIENT_MAX.defaultValue();
    private int maxRequestsPerBatch = Keys.REQUESTS_PER_BATCH_MAX.defaultValue();

    private Builder() {}

    public Builder minTtl(Duration minTtl) {
      this.minTtl = minTtl;
      return this;
    }

    public Builder maxTtl(Duration maxTtl) {
      this.maxTtl = maxTtl;
      return this;
    }

    public Builder takeoverGrace(Duration takeoverGrace) {
      this.takeoverGrace = takeoverGrace;
      return this;
    }

    public Builder maxResourceBytes(int maxResourceBytes) {
      this.maxResourceBytes = maxResourceBytes;
      return this;
    }

    public Builder maxKeyBytes(int maxKeyBytes) {
      this.maxKeyBytes = maxKeyBytes;
      return this;
    }

    public Builder maxOwnerBytes(int maxOwnerBytes) {
      this.maxOwnerBytes = maxOwnerBytes;
      return this;
    }

    public Builder maxValueBytes(int maxValueBytes) {
      this.maxValueBytes = maxValueBytes;
      return this;
    }

    public Builder maxKeysPerWrite(int maxKeysPerWrite) {
      this.maxKeysPerWrite = maxKeysPerWrite;
      return this;
    }

    public Builder maxRequestIdBytes(int maxRequestIdBytes) {
      this.maxRequestIdBytes = maxRequestIdBytes;
      return this;
    }

    public Builder maxRequestIdsPerLease(int maxRequestIdsPerLease) {
      this.maxRequestIdsPerLease = maxRequestIdsPerLease;
      return this;
    }

    public Builder idleTimeout(Duration idleTimeout) {
      this.idleTimeout = idleTimeout;
      return this;
    }

    public Builder waiterLiveness(Duration waiterLiveness) {
      this.waiterLiveness = waiterLiveness;
      return this;
    }

    public Builder maxWaitersPerResource(int maxWaitersPerResource) {
      this.maxWaitersPerResource = maxWaitersPerResource;
      return this;
    }

    public Builder maxKeysPerResource(int maxKeysPerResource) {
      this.maxKeysPerResource = maxKeysPerResource;
      return this;
    }

    public Builder maxResources(int maxResources) {
      this.maxResources = maxResources;
      return this;
    }

    public Builder maxWatchesPerClient(int maxWatchesPerClient) {
      this.maxWatchesPerClient = maxWatchesPerClient;
      return this;
    }

    public Builder maxRequestsPerBatch(int maxRequestsPerBatch) {
      this.maxRequestsPerBatch = maxRequestsPerBatch;
      return this;
    }

    /** The limits; a bound the state machine could not honour is a {@link ConfigException}. */
    public Limits build() {
      return new Limits(
          minTtl,
          maxTtl,
          takeoverGrace,
          maxResourceBytes,
          maxKeyBytes,
          maxOwnerBytes,
          maxValueBytes,
          maxKeysPerWrite,
          maxRequestIdBytes,
          maxRequestIdsPerLease,
          idleTimeout,
          waiterLiveness,
          maxWaitersPerResource,
          maxKeysPerResource,
          maxResources,
          maxWatchesPerClient,
          maxRequestsPerBatch);
    }
  }
}
