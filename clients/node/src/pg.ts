/**
 * Fencing tokens enforced by your own PostgreSQL, through node-postgres (`pg`): the guard row of
 * fencekeeper-jdbc, from Node. A fence table holds one row per resource with the newest token the
 * database has accepted; every fenced transaction first advances that row to its token only if the
 * row's token is not newer. If that changes no row, a newer token has already been accepted here, and
 * the transaction is rolled back with a {@link StaleFenceTokenError}: the stale writer is refused by
 * PostgreSQL itself, inside its own transaction, however long it was paused.
 *
 * The row learns of a newer token when that token's holder guards a transaction, or when it calls
 * {@link advance} — which is why a holder calls `advance` right after acquiring: from then on every
 * transaction of an older token is refused, also before the new holder has written anything.
 *
 * The table is the one fencekeeper-jdbc's migration creates (this package ships the same file:
 * {@link MIGRATION_FILE}); Java and Node workers can fence the same resources in one database.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FencekeeperError } from './errors';

/** The shipped migration: creates `fencekeeper_fence` if it does not exist. */
export const MIGRATION_FILE = path.join(__dirname, '..', 'sql', 'postgresql', 'V1__fencekeeper_fence.sql');

/** The default fence table, as the migration names it. */
export const DEFAULT_TABLE = 'fencekeeper_fence';

/** SQLState of a stale token's refusal: outside SQL's transient classes, so nothing retries it. */
export const STALE_SQLSTATE = 'FK001';

const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;
const MAX_RESOURCE_LENGTH = 512;

/** What the helper needs of a `pg.Client`, `pg.PoolClient` or `pg.Pool`. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rowCount: number | null; rows: Array<Record<string, unknown>> }>;
  /** node-postgres 8.12 and later: 'I' idle, 'T' in a transaction, 'E' in a failed one. */
  getTransactionStatus?(): string | null;
}

/** What the helper needs of a `pg.Pool`. */
export interface PoolLike extends Queryable {
  connect(): Promise<Queryable & { release(error?: Error | boolean): void }>;
  readonly totalCount: number;
}

/** A fencing token with its resource: a `Lease` of this package is one. */
export interface Fence {
  readonly resource: string;
  readonly token: bigint | number | string;
}

export interface FenceOptions {
  /** The fence table, optionally schema-qualified (default `fencekeeper_fence`). */
  table?: string;
}

export interface AdvanceOptions extends FenceOptions {
  /**
   * How long `advance` waits for an older holder's open transaction to release the guard row, in ms
   * (default 5000, as fencekeeper-jdbc's `advanceLockWait`): an older holder paused inside its
   * transaction must not stall the newer one's start. Past it, PostgreSQL's lock timeout (SQLState
   * 55P03) is thrown and nothing changed.
   */
  lockWaitMs?: number;
}

const DEFAULT_ADVANCE_LOCK_WAIT_MS = 5000;

/**
 * The transaction's token is older than one this database has already accepted for the resource: the
 * transaction was rolled back. Do not retry with the same token.
 */
export class StaleFenceTokenError extends FencekeeperError {
  readonly resource: string;
  readonly newerToken: bigint;
  readonly sqlState = STALE_SQLSTATE;

  constructor(resource: string, sentToken: bigint, newerToken: bigint) {
    super(
      'STALE_TOKEN',
      `resource '${resource}' sent token ${sentToken} but the database has accepted token ${newerToken}; the transaction was rolled back`,
      { sentToken, currentToken: newerToken },
    );
    this.resource = resource;
    this.newerToken = newerToken;
  }
}

Object.defineProperty(StaleFenceTokenError.prototype, 'name', {
  value: 'StaleFenceTokenError',
  writable: true,
  configurable: true,
});

/** Runs the shipped migration (idempotent: `CREATE TABLE IF NOT EXISTS`). */
export async function migrate(db: Queryable): Promise<void> {
  await db.query(readFileSync(MIGRATION_FILE, 'utf8'));
}

/**
 * Runs `work` in a transaction guarded by `fence`'s token: BEGIN, the guard, `work(client)`, COMMIT.
 * Rolls back and rethrows when the token is stale ({@link StaleFenceTokenError}), when `work` throws,
 * or when the commit fails. `db` is a `pg.Pool` (a client is taken for the transaction and given back)
 * or a connected `pg.Client` / `PoolClient` that is not inside a transaction.
 */
export async function fencedTransaction<T>(
  db: PoolLike | Queryable,
  fence: Fence,
  work: (client: Queryable) => Promise<T>,
  options: FenceOptions = {},
): Promise<T> {
  const { resource, token } = checkFence(fence);
  const table = checkTable(options.table);
  if (typeof work !== 'function') {
    throw new FencekeeperError('INVALID_ARGUMENT', 'work: must be a function (client) => Promise');
  }
  return inOwnTransaction(db, 'fencedTransaction', async (client) => {
    await guardRow(client, table, resource, token);
    return work(client);
  });
}

/**
 * Raises `fence.resource`'s guard row to `fence.token` in a short transaction of its own: from its
 * commit on, every transaction guarded with an older token is refused, also before this token's holder
 * writes anything. Call it right after acquiring the lease, before the work: without it the database
 * learns of the new token only at the new holder's first fenced transaction, and an older holder that
 * resumes before then still commits.
 *
 * Rejects with {@link StaleFenceTokenError} when the database has already accepted a newer token (this
 * lease is stale already), with PostgreSQL's lock timeout (SQLState 55P03) when an older holder's open
 * transaction kept the row locked longer than `lockWaitMs`, and with the driver's error when the
 * database cannot be reached. `db` is as for {@link fencedTransaction}.
 */
export async function advance(db: PoolLike | Queryable, fence: Fence, options: AdvanceOptions = {}): Promise<void> {
  const { resource, token } = checkFence(fence);
  const table = checkTable(options.table);
  const lockWaitMs = options.lockWaitMs ?? DEFAULT_ADVANCE_LOCK_WAIT_MS;
  if (typeof lockWaitMs !== 'number' || !Number.isSafeInteger(lockWaitMs) || lockWaitMs < 1) {
    throw new FencekeeperError('INVALID_ARGUMENT', `lockWaitMs: ${String(lockWaitMs)} is not a whole number of ms >= 1`);
  }
  await inOwnTransaction(db, 'advance', async (client) => {
    // SET LOCAL: the timeout ends with this transaction, the connection goes back to the pool as it came.
    await client.query(`SET LOCAL lock_timeout = ${lockWaitMs}`);
    await guardRow(client, table, resource, token);
  });
}

/** BEGIN, `body`, COMMIT on a connection of the pool (or the client given); ROLLBACK when anything throws. */
async function inOwnTransaction<T>(
  db: PoolLike | Queryable,
  what: string,
  body: (client: Queryable) => Promise<T>,
): Promise<T> {
  const pooled = isPool(db) ? await db.connect() : undefined;
  const client: Queryable = pooled ?? db;
  let broken: Error | undefined;
  try {
    if (!pooled && inTransaction(client) === true) {
      // Its COMMIT would commit the caller's transaction: the caller wants guard().
      throw new FencekeeperError(
        'INVALID_ARGUMENT',
        `${what}: the client is inside a transaction already; use guard(client, fence) inside your own transaction`,
      );
    }
    await client.query('BEGIN');
    try {
      const result = await body(client);
      await client.query('COMMIT');
      return result;
    } catch (e) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackFailure) {
        // The connection is broken; the server rolls the transaction back when it notices.
        broken = rollbackFailure as Error;
      }
      throw e;
    }
  } finally {
    // A client whose rollback failed is destroyed rather than given back to the pool.
    pooled?.release(broken);
  }
}

/**
 * Guards a transaction you manage: advances `fence.resource`'s guard row to `fence.token` on `client`,
 * or throws {@link StaleFenceTokenError} when the row already holds a newer token. Call it inside the
 * transaction (after BEGIN), before the protected writes; its row lock lasts until your COMMIT or
 * ROLLBACK, and on a stale token you must roll back.
 */
export async function guard(client: Queryable, fence: Fence, options: FenceOptions = {}): Promise<void> {
  const { resource, token } = checkFence(fence);
  const table = checkTable(options.table);
  if (isPool(client as PoolLike | Queryable) || !(await insideTransaction(client))) {
    // In autocommit the guard would commit at once and release its row lock: the writes after it would
    // not be fenced, and a stale token's writes could not be rolled back.
    throw new FencekeeperError(
      'INVALID_ARGUMENT',
      `guard: refusing to guard '${resource}' outside a transaction (${isPool(client as PoolLike) ? 'a pg.Pool runs each query on any of its clients' : 'the client is not inside BEGIN'}): ` +
        `the guard row's lock would be released at once and the writes after it would not be fenced; ` +
        `call it after BEGIN on the client the transaction runs on, or use fencedTransaction`,
    );
  }
  await guardRow(client, table, resource, token);
}

/** What node-postgres knows of the connection's transaction: true, false, or undefined (older pg). */
function inTransaction(client: Queryable): boolean | undefined {
  if (typeof client.getTransactionStatus !== 'function') {
    return undefined;
  }
  const status = client.getTransactionStatus();
  return status === null ? undefined : status !== 'I';
}

/** Whether `client` is inside a transaction block; asks PostgreSQL when the driver does not say. */
async function insideTransaction(client: Queryable): Promise<boolean> {
  const known = inTransaction(client);
  if (known !== undefined) {
    return known;
  }
  // A savepoint exists only inside a transaction block: outside one PostgreSQL refuses it (25P01).
  try {
    await client.query('SAVEPOINT fencekeeper_guard_check');
  } catch (e) {
    if ((e as { code?: string }).code === '25P01') {
      return false;
    }
    throw e;
  }
  await client.query('RELEASE SAVEPOINT fencekeeper_guard_check');
  return true;
}

/** The newest token the database has accepted for `resource`, or null if none. */
export async function acceptedToken(db: Queryable, resource: string, options: FenceOptions = {}): Promise<bigint | null> {
  checkResource(resource);
  const result = await db.query(`SELECT token FROM ${checkTable(options.table)} WHERE resource = $1`, [resource]);
  return result.rows.length > 0 ? BigInt(String(result.rows[0].token)) : null;
}

/**
 * The guard statement fencekeeper-jdbc runs on PostgreSQL. PostgreSQL locks the conflicting row even
 * when the WHERE rejects the update, and under READ COMMITTED re-evaluates the WHERE on the newest
 * committed version after waiting for a concurrent writer, so a waiting older token is refused.
 */
function guardStatement(table: string): string {
  return (
    `INSERT INTO ${table} (resource, token, written_at) VALUES ($1, $2, CURRENT_TIMESTAMP) ` +
    `ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token, written_at = EXCLUDED.written_at ` +
    `WHERE ${table}.token <= EXCLUDED.token`
  );
}

async function guardRow(client: Queryable, table: string, resource: string, token: bigint): Promise<void> {
  const result = await client.query(guardStatement(table), [resource, token.toString()]);
  if (result.rowCount === 1) {
    return;
  }
  if (result.rowCount === 0) {
    throw new StaleFenceTokenError(resource, token, (await acceptedToken(client, resource, { table })) ?? -1n);
  }
  throw new FencekeeperError(
    'INTERNAL',
    `the guard statement for '${resource}' changed ${result.rowCount} rows of ${table}; is 'resource' its primary key?`,
  );
}

function isPool(db: PoolLike | Queryable): db is PoolLike {
  const candidate = db as Partial<PoolLike>;
  return typeof candidate.connect === 'function' && typeof candidate.totalCount === 'number';
}

function checkFence(fence: Fence): { resource: string; token: bigint } {
  if (!fence || typeof fence !== 'object') {
    throw new FencekeeperError('INVALID_ARGUMENT', 'fence: pass a Lease or { resource, token }');
  }
  checkResource(fence.resource);
  let token: bigint;
  try {
    token = BigInt(fence.token);
  } catch {
    throw new FencekeeperError('INVALID_ARGUMENT', `token: '${String(fence.token)}' is not a fencing token`);
  }
  if (token <= 0n || token >= 1n << 63n) {
    throw new FencekeeperError('INVALID_ARGUMENT', `token: ${token} is not a fencing token (tokens are positive)`);
  }
  return { resource: fence.resource, token };
}

function checkResource(resource: unknown): asserts resource is string {
  if (typeof resource !== 'string' || resource.length === 0) {
    throw new FencekeeperError('INVALID_ARGUMENT', 'resource: must be a non-empty string');
  }
  if (resource.length > MAX_RESOURCE_LENGTH) {
    throw new FencekeeperError(
      'INVALID_ARGUMENT',
      `resource: ${resource.length} characters, the fence table holds at most ${MAX_RESOURCE_LENGTH}`,
    );
  }
}

function checkTable(table: string | undefined): string {
  const name = table ?? DEFAULT_TABLE;
  if (!TABLE_NAME.test(name)) {
    throw new FencekeeperError(
      'INVALID_ARGUMENT',
      `table: '${name}' must be an unquoted SQL identifier, optionally schema-qualified (letters, digits, underscores)`,
    );
  }
  return name;
}
