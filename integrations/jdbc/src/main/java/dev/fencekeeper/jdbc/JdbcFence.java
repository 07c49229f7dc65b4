package dev.fencekeeper.jdbc;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.LeaseHeldException;
import dev.fencekeeper.client.Result;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Fencing tokens enforced by the user's own database. A fence table holds one guard row per
 * resource with the newest token the database has accepted. Every fenced transaction first runs one
 * statement that advances that row to its token only if the row's token is not newer ({@code token
 * <= ?}); if that changes no row, a newer lease holder has already committed here, and the
 * transaction is rolled back with a {@link StaleFenceTokenException}.
 *
 * <p>Why not {@code lease.isValid()} or the cluster's validate before writing: that is
 * check-then-act, and the pause that outlives the lease can fall between the check and the write.
 * The guard is in the same transaction as the writes, and the row lock it takes serialises the
 * writers of one resource until commit, so an older token can never commit after a newer one:
 *
 * <pre>
 *   worker A (token 41)                  worker B (token 42)
 *   guard 41: row 40 -> 41, row locked
 *                                         guard 42: waits for A's row lock
 *   writes, commits                       row 41 -> 42, writes, commits
 *   --- or, if A paused before its guard and B committed first ---
 *   guard 41: row holds 42, 0 rows -> StaleFenceTokenException, rolled back
 * </pre>
 *
 * <p>The same token may write any number of times ({@code <=}, not {@code <}): one lease keeps one
 * token for all its writes. Isolation levels, pools and migrations: see docs/external-stores.md.
 *
 * <p>The guard row learns of a newer token when its holder guards a transaction. To refuse the
 * older holder from the moment the newer one holds the lease, before the newer one writes anything,
 * take the lease with {@link #acquire}: it raises the guard row before it returns.
 *
 * <pre>{@code
 * JdbcFence fence = JdbcFence.builder(dataSource).client(client).build();
 * try (Lease lease = fence.acquire("invoice-batch", Duration.ofSeconds(30))) {
 *   fence.inTransaction(lease, conn -> chargeInvoices(conn));
 * }
 * }</pre>
 *
 * <p>A guard row only ever moves to a token the cluster issued for its resource: the {@link Lease}
 * forms take the token from the lease, and the forms that take a raw {@code (resource, token)}
 * first ask the cluster ({@link FencingClient#validate}) through the client given to {@link
 * Builder#client}; without one they refuse to run. A made-up token (one never issued, another
 * resource's, {@code Long.MAX_VALUE}) would otherwise lock the real holders out for good.
 */
public final class JdbcFence {
  /** The default fence table name. */
  public static final String DEFAULT_TABLE = "fencekeeper_fence";

  private static final Pattern TABLE_NAME =
      Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");
  private static final int MAX_RESOURCE_LENGTH = 512;

  private final DataSource dataSource;
  private final String table;
  private final boolean createTable;
  private final FenceDialect configuredDialect;
  private final Duration advanceLockWait;
  // Null when built without a client: then only the Lease forms run.
  private final FencingClient client;
  private final TokenCheck tokenCheck;
  private final LongAdder refused = new LongAdder();
  private volatile FenceDialect dialect;
  private volatile boolean tableReady;

  private JdbcFence(Builder b) {
    this.dataSource = b.dataSource;
    this.table = b.table;
    this.createTable = b.createTable;
    this.configuredDialect = b.dialect;
    this.dialect = b.dialect;
    this.advanceLockWait = b.advanceLockWait;
    this.client = b.client;
    this.tokenCheck = b.tokenCheck != null ? b.tokenCheck : this::checkWithCluster;
  }

  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  public String table() {
    return table;
  }

  /**
   * Opens a transaction on a connection from the data source, guards it with the lease's token,
   * runs {@code work}, and commits. Rolls back when the token is stale ({@link
   * StaleFenceTokenException}), when {@code work} throws, or when the commit fails (a serialization
   * failure under REPEATABLE READ or SERIALIZABLE arrives as the driver's {@link SQLException},
   * SQLState 40001 — never as a result).
   */
  public <T> T inTransaction(Lease lease, SqlWork<T> work) throws SQLException {
    Objects.requireNonNull(lease, "lease");
    return runGuarded(lease.resource(), lease.token(), work);
  }

  /**
   * As {@link #inTransaction(Lease, SqlWork)} for a token obtained elsewhere (the CLI, a ShedLock
   * lock, another process). The cluster is asked first whether it issued {@code token} for {@code
   * resource}; nothing is opened unless it did.
   *
   * @throws StaleFenceTokenException if the cluster has issued a newer token for {@code resource}
   * @throws IllegalArgumentException if the cluster never issued {@code token} for {@code resource}
   * @throws FencingException if the cluster could not answer (UNAVAILABLE)
   * @throws IllegalStateException if this fence was built without {@link Builder#client}
   */
  public <T> T inTransaction(String resource, long token, SqlWork<T> work) throws SQLException {
    checkArguments(resource, token);
    Objects.requireNonNull(work, "work");
    tokenCheck.verify(resource, token);
    return runGuarded(resource, token, work);
  }

  private <T> T runGuarded(String resource, long token, SqlWork<T> work) throws SQLException {
    checkArguments(resource, token);
    Objects.requireNonNull(work, "work");
    if (createTable && !tableReady) {
      // Before taking the transaction's connection: a pool of one must not need a second one for
      // the DDL.
      createTable();
    }
    try (Connection connection = dataSource.getConnection()) {
      boolean autoCommit = connection.getAutoCommit();
      if (autoCommit) {
        connection.setAutoCommit(false);
      }
      try {
        guardVerified(connection, resource, token, 0);
        T result = work.run(connection);
        connection.commit();
        return result;
      } catch (SQLException | RuntimeException | Error e) {
        rollback(connection, e);
        throw e;
      } finally {
        if (autoCommit) {
          // Pooled connections go back as they came.
          connection.setAutoCommit(true);
        }
      }
    }
  }

  /**
   * Acquires {@code resource} with {@link FencingClient#acquire(String, Duration)} and raises its
   * guard row to the new token before returning, so from the moment the caller holds the lease
   * every transaction of an older holder is refused, also before this one writes anything. The
   * lease renews itself until closed. If the guard row cannot be raised, the lease is released and
   * the error thrown.
   *
   * @throws LeaseHeldException if another live lease holds it
   * @throws StaleFenceTokenException if the database has already accepted a newer token (possible
   *     only if the guard row was moved by other means)
   * @throws SQLException if the database cannot be reached, or an older holder's transaction kept
   *     the guard row locked longer than {@link Builder#advanceLockWait}
   * @throws IllegalStateException if this fence was built without {@link Builder#client}
   */
  public Lease acquire(String resource, Duration ttl) throws SQLException {
    checkResource(resource);
    return advanced(requireClient("acquire").acquire(resource, ttl));
  }

  /**
   * As {@link #acquire(String, Duration)}, waiting up to {@code waitTimeout} for the resource to
   * become free ({@link FencingClient#acquire(String, Duration, Duration)}).
   */
  public Lease acquire(String resource, Duration ttl, Duration waitTimeout) throws SQLException {
    checkResource(resource);
    return advanced(requireClient("acquire").acquire(resource, ttl, waitTimeout));
  }

  /**
   * As {@link #acquire(String, Duration)} if the resource is free now ({@link
   * FencingClient#tryAcquire(String, Duration)}); empty, and the guard row untouched, if not.
   */
  public Optional<Lease> tryAcquire(String resource, Duration ttl) throws SQLException {
    checkResource(resource);
    Optional<Lease> lease = requireClient("tryAcquire").tryAcquire(resource, ttl);
    return lease.isPresent() ? Optional.of(advanced(lease.get())) : lease;
  }

  /** {@code lease}, after its guard row has been raised to its token; released if that failed. */
  private Lease advanced(Lease lease) throws SQLException {
    try {
      advanceVerified(lease.resource(), lease.token());
      return lease;
    } catch (SQLException | RuntimeException | Error e) {
      // A lease its database was not told about must not be used: give it back at once.
      try {
        lease.close();
      } catch (RuntimeException closing) {
        e.addSuppressed(closing);
      }
      throw e;
    }
  }

  /**
   * Raises the guard row of the lease's resource to its token in a short transaction of its own:
   * from its commit on, every transaction guarded with an older token is refused, also before this
   * lease's holder writes anything. Call it right after acquiring the lease, before the work.
   *
   * @throws StaleFenceTokenException if the database has already accepted a newer token (this lease
   *     is stale already)
   * @throws SQLException if the database cannot be reached, or an older holder's transaction kept
   *     the guard row locked longer than {@link Builder#advanceLockWait}
   */
  public void advance(Lease lease) throws SQLException {
    Objects.requireNonNull(lease, "lease");
    advanceVerified(lease.resource(), lease.token());
  }

  /**
   * As {@link #advance(Lease)} for a token obtained elsewhere (a ShedLock lock, another process).
   * The cluster is asked first whether it issued {@code token} for {@code resource}; the guard row
   * is not touched unless it did.
   *
   * @throws StaleFenceTokenException if the cluster has issued a newer token for {@code resource},
   *     or the database has accepted one
   * @throws IllegalArgumentException if the cluster never issued {@code token} for {@code resource}
   * @throws FencingException if the cluster could not answer (UNAVAILABLE)
   * @throws IllegalStateException if this fence was built without {@link Builder#client}
   */
  public void advance(String resource, long token) throws SQLException {
    checkArguments(resource, token);
    tokenCheck.verify(resource, token);
    advanceVerified(resource, token);
  }

  private void advanceVerified(String resource, long token) throws SQLException {
    checkArguments(resource, token);
    if (createTable && !tableReady) {
      createTable();
    }
    try (Connection connection = dataSource.getConnection()) {
      boolean autoCommit = connection.getAutoCommit();
      if (autoCommit) {
        connection.setAutoCommit(false);
      }
      try {
        // An older holder inside its transaction holds the row's lock until it commits: wait for
        // it, but only so long; a holder paused there must not stall the newer one's start.
        guardVerified(connection, resource, token, (int) Math.max(1, advanceLockWait.toSeconds()));
        connection.commit();
      } catch (SQLException | RuntimeException | Error e) {
        rollback(connection, e);
        throw e;
      } finally {
        if (autoCommit) {
          connection.setAutoCommit(true);
        }
      }
    }
  }

  /**
   * How many transactions (and advances) this fence has refused because a newer token was known —
   * to the database, or, for a raw token, to the cluster — since it was built.
   */
  public long refusals() {
    return refused.sum();
  }

  /**
   * Guards a transaction the caller manages (Spring's {@code @Transactional}, jOOQ, plain JDBC):
   * advances the guard row of the lease's resource to its token on {@code txConnection}, or throws
   * {@link StaleFenceTokenException} if the row already holds a newer token. Call it before the
   * transaction's protected writes; its row lock lasts until the caller's commit or rollback. On a
   * stale token the caller must roll back (frameworks do, since the exception propagates).
   *
   * @throws IllegalStateException if {@code txConnection} is in autocommit mode: the guard would
   *     commit at once and release its lock, leaving the writes that follow unfenced
   */
  public void guard(Connection txConnection, Lease lease) throws SQLException {
    Objects.requireNonNull(lease, "lease");
    guardVerified(txConnection, lease.resource(), lease.token(), 0);
  }

  /**
   * As {@link #guard(Connection, Lease)} for a token obtained elsewhere (a ShedLock lock, another
   * process). The cluster is asked first whether it issued {@code token} for {@code resource}; the
   * guard row is not touched unless it did.
   *
   * @throws StaleFenceTokenException if the cluster has issued a newer token for {@code resource},
   *     or the database has accepted one
   * @throws IllegalArgumentException if the cluster never issued {@code token} for {@code resource}
   * @throws FencingException if the cluster could not answer (UNAVAILABLE)
   * @throws IllegalStateException if {@code txConnection} is in autocommit mode, or this fence was
   *     built without {@link Builder#client}
   */
  public void guard(Connection txConnection, String resource, long token) throws SQLException {
    Objects.requireNonNull(txConnection, "txConnection");
    checkArguments(resource, token);
    requireTransaction(txConnection, resource);
    tokenCheck.verify(resource, token);
    guardVerified(txConnection, resource, token, 0);
  }

  /**
   * Moves the guard row; {@code token} is known to be issued for {@code resource} (it came from a
   * lease, or the cluster confirmed it). {@code queryTimeoutSeconds}: 0 waits for the row lock as
   * long as the database does.
   */
  private void guardVerified(
      Connection txConnection, String resource, long token, int queryTimeoutSeconds)
      throws SQLException {
    Objects.requireNonNull(txConnection, "txConnection");
    checkArguments(resource, token);
    requireTransaction(txConnection, resource);
    FenceDialect d = dialect(txConnection);
    ensureTable(txConnection, d);
    int updated;
    try (PreparedStatement guard = txConnection.prepareStatement(d.guardStatement(table))) {
      guard.setString(1, resource);
      guard.setLong(2, token);
      if (queryTimeoutSeconds > 0) {
        guard.setQueryTimeout(queryTimeoutSeconds);
      }
      updated = guard.executeUpdate();
    }
    if (!d.updateCountDecides()) {
      long now = lockedToken(txConnection, d, resource);
      if (now != token) {
        refused.increment();
        throw new StaleFenceTokenException(resource, token, now);
      }
      return;
    }
    if (updated == 0) {
      refused.increment();
      throw new StaleFenceTokenException(
          resource, token, readToken(txConnection, d, resource).orElse(-1));
    }
    if (updated != 1) {
      throw new SQLException(
          "fencekeeper-jdbc: the guard statement for '"
              + resource
              + "' changed "
              + updated
              + " rows of "
              + table
              + "; is 'resource' its primary key?");
    }
  }

  /** The newest token the database has accepted for {@code resource}, if it has accepted any. */
  public OptionalLong acceptedToken(String resource) throws SQLException {
    checkResource(resource);
    try (Connection connection = dataSource.getConnection()) {
      FenceDialect d = dialect(connection);
      if (createTable) {
        ensureTable(connection, d);
      }
      return readToken(connection, d, resource);
    }
  }

  /** Creates the fence table if missing (what {@code createTable(true)} does on first use). */
  public void createTable() throws SQLException {
    try (Connection connection = dataSource.getConnection()) {
      FenceDialect d = dialect(connection);
      boolean autoCommit = connection.getAutoCommit();
      try (Statement s = connection.createStatement()) {
        s.execute(d.createTableStatement(table));
      }
      if (!autoCommit) {
        connection.commit();
      }
      tableReady = true;
    }
  }

  private OptionalLong readToken(Connection connection, FenceDialect d, String resource)
      throws SQLException {
    try (PreparedStatement q = connection.prepareStatement(d.currentTokenQuery(table))) {
      q.setString(1, resource);
      try (ResultSet rs = q.executeQuery()) {
        return rs.next() ? OptionalLong.of(rs.getLong(1)) : OptionalLong.empty();
      }
    }
  }

  private long lockedToken(Connection connection, FenceDialect d, String resource)
      throws SQLException {
    try (PreparedStatement q = connection.prepareStatement(d.lockingTokenQuery(table))) {
      q.setString(1, resource);
      try (ResultSet rs = q.executeQuery()) {
        if (!rs.next()) {
          throw new SQLException(
              "fencekeeper-jdbc: the guard statement left no row for '"
                  + resource
                  + "' in "
                  + table);
        }
        return rs.getLong(1);
      }
    }
  }

  private void ensureTable(Connection txConnection, FenceDialect d) throws SQLException {
    if (!createTable || tableReady) {
      return;
    }
    // Created on a connection of its own: DDL inside the caller's transaction would commit it on
    // some databases, or be rolled back with it on others.
    createTable();
  }

  private FenceDialect dialect(Connection connection) throws SQLException {
    FenceDialect d = dialect;
    if (d == null) {
      d = FenceDialect.detect(connection.getMetaData());
      dialect = d;
    }
    return d;
  }

  private static void requireTransaction(Connection txConnection, String resource)
      throws SQLException {
    if (txConnection.getAutoCommit()) {
      throw new IllegalStateException(
          "fencekeeper-jdbc: refusing to guard '"
              + resource
              + "' on a connection in autocommit mode: the guard row's lock would be released at"
              + " once and the writes after it would not be fenced; call setAutoCommit(false) or"
              + " run inside the caller's transaction");
    }
  }

  private FencingClient requireClient(String what) {
    if (client == null) {
      throw new IllegalStateException(
          "fencekeeper-jdbc: "
              + what
              + " needs the cluster; build the fence with JdbcFence.builder(dataSource)"
              + ".client(client)");
    }
    return client;
  }

  /**
   * Lets a raw token move the guard row only if the cluster issued it for this resource: CURRENT
   * (the live lease) or EXPIRED (the newest token, its lease ended; the same a stale {@link Lease}
   * may still present). STALE cannot tell this resource's old token from another resource's, and
   * the cluster has a newer holder either way: refused as stale.
   */
  private void checkWithCluster(String resource, long token) throws SQLException {
    if (client == null) {
      throw new IllegalStateException(
          "fencekeeper-jdbc: refusing raw token "
              + token
              + " for '"
              + resource
              + "': without a client the fence cannot ask the cluster whether it issued it, and an"
              + " unissued token would lock the real holders out; build the fence with"
              + " JdbcFence.builder(dataSource).client(client), or pass the Lease");
    }
    Result answer = client.validate(resource, token);
    switch (answer.code()) {
      case CURRENT, EXPIRED -> {}
      case STALE -> {
        refused.increment();
        throw StaleFenceTokenException.issuedSince(resource, token, answer.currentToken());
      }
      case INVALID_ARGUMENT ->
          throw new IllegalArgumentException(
              "fencekeeper-jdbc: the cluster refused to check token "
                  + token
                  + " for '"
                  + resource
                  + "' ("
                  + answer
                  + "); the guard row was not touched");
      case UNKNOWN_TOKEN ->
          throw new IllegalArgumentException(
              "fencekeeper-jdbc: token "
                  + token
                  + " was never issued for '"
                  + resource
                  + "' (the cluster answered "
                  + answer
                  + "); the guard row was not touched");
      default -> throw new FencingException(answer);
    }
  }

  private static void rollback(Connection connection, Throwable cause) {
    try {
      connection.rollback();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  private static void checkArguments(String resource, long token) {
    checkResource(resource);
    if (token <= 0) {
      throw new IllegalArgumentException(
          "token: " + token + " is not a fencing token (tokens are positive)");
    }
  }

  private static void checkResource(String resource) {
    if (resource == null || resource.isEmpty()) {
      throw new IllegalArgumentException("resource: must be non-empty");
    }
    if (resource.length() > MAX_RESOURCE_LENGTH) {
      throw new IllegalArgumentException(
          "resource: "
              + resource.length()
              + " characters, the fence table holds at"
              + " most "
              + MAX_RESOURCE_LENGTH);
    }
  }

  @Override
  public String toString() {
    return "JdbcFence{table="
        + table
        + ", dialect="
        + (configuredDialect != null ? configuredDialect : "detected")
        + "}";
  }

  /** Settings of a {@link JdbcFence}; only the data source is required. */
  public static final class Builder {
    private final DataSource dataSource;
    private String table = DEFAULT_TABLE;
    private boolean createTable;
    private FenceDialect dialect;
    private Duration advanceLockWait = Duration.ofSeconds(5);
    private FencingClient client;
    private TokenCheck tokenCheck;

    private Builder(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /**
     * The cluster the tokens come from. Needed by {@link JdbcFence#acquire} and by every form that
     * takes a raw {@code (resource, token)}: each asks the cluster whether it issued the token for
     * the resource before the guard row moves. The fence does not close it.
     */
    public Builder client(FencingClient client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    /** Replaces the cluster's check of raw tokens; for tests of the guard row alone. */
    Builder tokenCheck(TokenCheck check) {
      this.tokenCheck = Objects.requireNonNull(check, "check");
      return this;
    }

    /** The fence table, optionally schema-qualified (default {@value JdbcFence#DEFAULT_TABLE}). */
    public Builder table(String table) {
      if (table == null || !TABLE_NAME.matcher(table).matches()) {
        throw new IllegalArgumentException(
            "table: '"
                + table
                + "' must be an unquoted SQL identifier, optionally"
                + " schema-qualified (letters, digits, underscores)");
      }
      this.table = table;
      return this;
    }

    /**
     * Whether the library creates the table on first use (default false: the application's
     * migrations do, from {@code db/fencekeeper/<dialect>/V1__fencekeeper_fence.sql}).
     */
    public Builder createTable(boolean createTable) {
      this.createTable = createTable;
      return this;
    }

    /** Fixes the dialect instead of detecting it from the first connection's metadata. */
    public Builder dialect(FenceDialect dialect) {
      this.dialect = Objects.requireNonNull(dialect, "dialect");
      return this;
    }

    /**
     * How long {@link JdbcFence#advance} waits for an older holder's transaction to release the
     * guard row before it fails (default 5 s; whole seconds, at least 1). The wait is the driver's
     * query timeout.
     */
    public Builder advanceLockWait(Duration wait) {
      if (wait == null || wait.toSeconds() < 1) {
        throw new IllegalArgumentException("advanceLockWait: at least 1 s, was " + wait);
      }
      this.advanceLockWait = wait;
      return this;
    }

    public JdbcFence build() {
      return new JdbcFence(this);
    }
  }
}
