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
  public static final int DEFAULT_MAX_KEYS_PER_RESOURCE = 10_000;
  public static final int DEFAULT_MAX_RESOURCES = 1_000_000;
  public static final int DEFAULT_MAX_WATCHES_PER_CLIENT = 1_024;
  public static final int DEFAULT_MAX_REQUESTS_PER_BATCH = 256;

  /** Limits with the default batch size. */
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

  /** Limits with the default key, resource and watch counts. */
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

  /** Limits with the default idle timeout, waiter liveness and waiter count. */
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
        Duration.ofMinutes(10),
        Duration.ofSeconds(30),
        1024);
  }

  public Limits {
    positiveMillis(Keys.LEASE_TTL_MIN, minTtl);
    positiveMillis(Keys.LEASE_TTL_MAX, maxTtl);
    // A grace of zero would let any election cost a live holder its lease (docs/design.md, Time).
    positiveMillis(Keys.LEASE_TAKEOVER_GRACE, takeoverGrace);
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
    positive(Keys.RESOURCE_NAME_MAX_BYTES, maxResourceBytes);
    positive(Keys.KEY_MAX_BYTES, maxKeyBytes);
    positive(Keys.OWNER_MAX_BYTES, maxOwnerBytes);
    positive(Keys.VALUE_MAX_BYTES, maxValueBytes);
    positive(Keys.KEYS_PER_WRITE_MAX, maxKeysPerWrite);
    positive(Keys.REQUEST_ID_MAX_BYTES, maxRequestIdBytes);
    positive(Keys.REQUEST_IDS_PER_LEASE_MAX, maxRequestIdsPerLease);
    positiveMillis(Keys.RESOURCES_IDLE_TIMEOUT, idleTimeout);
    positiveMillis(Keys.LEASE_WAITER_LIVENESS, waiterLiveness);
    positive(Keys.WAITERS_PER_RESOURCE_MAX, maxWaitersPerResource);
    positive(Keys.KEYS_PER_RESOURCE_MAX, maxKeysPerResource);
    positive(Keys.RESOURCES_MAX, maxResources);
    positive(Keys.WATCHES_PER_CLIENT_MAX, maxWatchesPerClient);
    positive(Keys.REQUESTS_PER_BATCH_MAX, maxRequestsPerBatch);
  }

  public Limits withMaxResources(int max) {
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
        max,
        maxWatchesPerClient,
        maxRequestsPerBatch);
  }

  public Limits withMaxKeysPerResource(int max) {
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
        max,
        maxResources,
        maxWatchesPerClient,
        maxRequestsPerBatch);
  }

  public Limits withMaxRequestsPerBatch(int max) {
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
        max);
  }

  /**
   * minTtl 100ms, maxTtl 1h, takeoverGrace 2s, resource name 256 B, key 512 B, owner 256 B, value 1
   * MiB, 64 keys per write, request id 128 B, 1024 request ids per lease, idle resources forgotten
   * after 10m, waiters kept 30s without a re-send, 1024 waiters per resource.
   */
  public static Limits defaults() {
    return new Limits(
        Duration.ofMillis(100),
        Duration.ofHours(1),
        Duration.ofSeconds(2),
        256,
        512,
        256,
        1 << 20,
        64,
        128,
        1024);
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

  private static void positiveMillis(String key, Duration d) {
    if (d == null) {
      throw new ConfigException(key + ": missing");
    }
    if (d.isNegative() || d.isZero()) {
      throw new ConfigException(key + ": '" + Durations.describe(d) + "' must be positive");
    }
    // Sub-millisecond values could not be written back to a config file (see Durations.format).
    if (d.getNano() % 1_000_000 != 0) {
      throw new ConfigException(key + ": '" + d + "' must be a whole number of milliseconds");
    }
    // Guards toMillis() overflow in every consumer; no lease outlives a year in any sane setup.
    if (d.compareTo(Duration.ofDays(365)) > 0) {
      throw new ConfigException(key + ": '" + Durations.describe(d) + "' exceeds 365 days");
    }
  }

  private static void positive(String key, int value) {
    if (value <= 0) {
      throw new ConfigException(key + ": '" + value + "' must be positive");
    }
  }
}
