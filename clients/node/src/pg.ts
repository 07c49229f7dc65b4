/**
 * Fencing tokens enforced by your own PostgreSQL, through node-postgres (`pg`): the guard row of
 * fencekeeper-jdbc, from Node. A fence table holds one row per resource with the newest token the
 * database has accepted; every fenced transaction first advances that row to its token only if the
 * row's token is not newer. If that changes no row, a newer lease holder has already committed here,
 * and the transaction is rolled back with a {@link StaleFenceTokenError}: the stale writer is refused by
 * PostgreSQL itself, inside its own transaction, however long it was paused.
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
    this.name = 'StaleFenceTokenError';
    this.resource = resource;
    this.newerToken = newerToken;
  }
}

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
  const pooled = isPool(db) ? await db.connect() : undefined;
  const client: Queryable = pooled ?? db;
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    try {
      await guardRow(client, table, resource, token);
      const result = await work(client);
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
  await guardRow(client, checkTable(options.table), resource, token);
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
