import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { jsonable, toLeaseInfo, toStoredValue, toWriteResult } from './convert';
import { FencekeeperError } from './errors';
import { Lease, type LeaseHost } from './lease';
import { Session } from './session';
import { Nodes, abortReason, checkSignal, parseEndpoints, raceSignal, throwIfAborted, tlsMaterial } from './transport';
import type {
  AcquireOptions,
  ConnectOptions,
  Consistency,
  EndpointClusters,
  LeaseInfo,
  ReadOptions,
  RevokeResult,
  StoredValue,
  ValidateStatus,
  WatchOptions,
  WriteOptions,
  WriteResult,
} from './types';
import { Watch } from './watch';
import type { WireConsistency, WireResponse, WireServerLimits } from './wire';

const DEFAULT_REQUEST_TIMEOUT_MS = 3000;
const DEFAULT_CALL_TIMEOUT_MS = 15000;
const CLOSE_TIMEOUT_MS = 5000;

/**
 * Connects to a fencekeeper cluster through its client ports, and resolves once a node answered.
 * Rejects with UNAVAILABLE when none did within the call timeout (at once when every endpoint refused
 * the connection or the TLS handshake), INVALID_ARGUMENT for bad options, the signal's reason when
 * `options.signal` aborts.
 */
export async function connect(options: ConnectOptions = {}): Promise<FencekeeperClient> {
  const client = new FencekeeperClient(options);
  try {
    await client.ping(checkSignal(options?.signal));
    return client;
  } catch (e) {
    await client.close();
    throw e;
  }
}

/** The deprecated spellings warn once per process, as Node's own deprecations do. */
let warnedDeprecated = false;

/** The endpoints to dial: the option, else FENCEKEEPER_ENDPOINTS, else the deprecated spellings. */
function endpointsOf(options: ConnectOptions): string[] {
  if (options.endpoints !== undefined) {
    return parseEndpoints(options.endpoints);
  }
  if (options.peers !== undefined) {
    deprecated('the connect option `peers` is deprecated: name the client ports as `endpoints`');
    return parseEndpoints(options.peers, 'peers');
  }
  const env = process.env.FENCEKEEPER_ENDPOINTS;
  if (env !== undefined && env.trim() !== '') {
    return parseEndpoints(env, 'FENCEKEEPER_ENDPOINTS');
  }
  const legacy = process.env.FENCEKEEPER_PEERS;
  if (legacy !== undefined && legacy.trim() !== '') {
    deprecated('FENCEKEEPER_PEERS is deprecated for clients: set FENCEKEEPER_ENDPOINTS (host:port of client ports)');
    return parseEndpoints(legacy, 'FENCEKEEPER_PEERS');
  }
  throw new FencekeeperError(
    'INVALID_ARGUMENT',
    "connect: pass { endpoints: 'host:port,...' } (the nodes' client ports) or set FENCEKEEPER_ENDPOINTS",
  );
}

function deprecated(message: string): void {
  if (!warnedDeprecated) {
    warnedDeprecated = true;
    process.emitWarning(message, { type: 'DeprecationWarning', code: 'FENCEKEEPER_PEERS' });
  }
}

/**
 * One connection to a cluster; share it within a process. Its leases are kept alive together by one
 * session stream to the leader. Every rejection is a {@link FencekeeperError} whose `code` is the
 * protocol's result code; queries answer what they found (`read` of a missing key is null).
 */
export class FencekeeperClient {
  /** The owner label of this client's leases. */
  readonly owner: string;
  private readonly nodes: Nodes;
  private readonly session: Session;
  private readonly leases = new Set<Lease>();
  /** What a lease may ask of this client; private at run time too, not part of the client's API. */
  readonly #host: LeaseHost;
  /** What the nodes said they accept, from the first answer to NodeStatus. */
  private limits: WireServerLimits | undefined;
  private readonly requestIdPrefix = randomBytes(9).toString('base64url');
  private requestCounter = 0;
  private closing: Promise<void> | undefined;

  constructor(options: ConnectOptions) {
    if (!options || typeof options !== 'object') {
      throw new FencekeeperError('INVALID_ARGUMENT', 'connect: pass { endpoints, tls? }');
    }
    const callTimeoutMs = positiveInt(options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS, 'callTimeoutMs');
    // One attempt never outlasts the call: a call timeout below the default request timeout shortens it.
    const requestTimeoutMs = positiveInt(
      options.requestTimeoutMs ?? Math.min(DEFAULT_REQUEST_TIMEOUT_MS, callTimeoutMs),
      'requestTimeoutMs',
    );
    this.owner = options.owner ?? `${hostname()}:${process.pid}`;
    this.nodes = new Nodes(endpointsOf(options), tlsMaterial(options.tls), requestTimeoutMs, callTimeoutMs);
    this.session = new Session(this.nodes, this.owner);
    this.#host = {
      write: (resource, token, key, value, writeOptions) => this.write(resource, token, key, value, writeOptions),
      delete: (resource, token, key, writeOptions) => this.delete(resource, token, key, writeOptions),
      read: (resource, key, readOptions) => this.read(resource, key, readOptions),
      release: (resource, token) => releaseToken(this.nodes, resource, token),
      forget: (lease) => {
        this.leases.delete(lease);
        this.session.remove(lease);
      },
    };
  }

  /** The client endpoints it dials, host:port. */
  get endpoints(): readonly string[] {
    return this.nodes.peers;
  }

  /**
   * Asks every endpoint at once which cluster its node belongs to, each given `timeoutMs` (default the
   * request timeout) to answer: check `oneCluster` to know the endpoints do not span two clusters. A node
   * that does not answer is listed in `unanswered` with the reason; this does not reject for it.
   */
  async clusterIds(options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<EndpointClusters> {
    const timeoutMs = positiveInt(options.timeoutMs ?? this.nodes.requestTimeoutMs, 'timeoutMs');
    const signal = checkSignal(options.signal);
    this.checkOpen();
    throwIfAborted(signal);
    const answers = await Promise.allSettled(
      this.nodes.peers.map((address) => this.nodes.ask(address, 'NodeStatus', {}, timeoutMs, signal)),
    );
    throwIfAborted(signal);
    const clusterIds: Record<string, string> = {};
    const unanswered: Record<string, string> = {};
    answers.forEach((answer, i) => {
      const address = this.nodes.peers[i];
      if (answer.status === 'fulfilled' && answer.value.node) {
        clusterIds[address] = answer.value.node.clusterId;
      } else {
        const reason = answer.status === 'rejected' ? answer.reason : undefined;
        unanswered[address] = reason?.details || reason?.message || `answered ${answer.status === 'fulfilled' ? answer.value.code : '?'}`;
      }
    });
    const ids = [...new Set(Object.values(clusterIds).filter((id) => id !== ''))];
    return { clusterIds, unanswered, oneCluster: ids.length <= 1, clusterId: ids.length === 1 ? ids[0] : undefined };
  }

  /** The id of this client's session: every lease it acquires carries it. */
  get sessionId(): string {
    return this.session.id;
  }

  /**
   * Takes a lease on `resource`: with `waitMs`, waits in line (FIFO) up to that long. Resolves with a
   * {@link Lease} the session keeps alive; rejects with HELD (another live lease; `holderOwner`,
   * `expiresAtMs`), WAITING (still queued when the wait ended), LOCK_DELAYED, INVALID_ARGUMENT,
   * PERMISSION_DENIED, OVERLOADED or UNAVAILABLE; with the signal's reason when `options.signal`
   * aborts (a queued wait is cancelled; a grant that raced the abort is released).
   */
  async acquire(resource: string, options: AcquireOptions): Promise<Lease> {
    checkName(resource, 'resource');
    if (!options || typeof options !== 'object') {
      throw new FencekeeperError('INVALID_ARGUMENT', 'acquire: pass { ttlMs, waitMs? }');
    }
    const ttlMs = positiveInt(options.ttlMs, 'ttlMs');
    const waitMs = nonNegativeInt(options.waitMs ?? 0, 'waitMs');
    const lockDelayMs = nonNegativeInt(options.lockDelayMs ?? 0, 'lockDelayMs');
    const owner = options.owner ?? this.owner;
    const requestId = options.requestId ?? this.newRequestId();
    const signal = checkSignal(options.signal);
    this.checkOpen();
    throwIfAborted(signal);
    await raceSignal(this.session.ensureOpen(), signal);
    const waitUntil = Date.now() + waitMs;
    let sentAt = Date.now();
    let response: WireResponse;
    try {
      response = await this.nodes.call(
        'Acquire',
        () => {
          sentAt = Date.now();
          return {
            resource,
            owner,
            ttlMs: String(ttlMs),
            requestId,
            waitMs: String(waitMs > 0 ? Math.max(waitUntil - sentAt, 1) : 0),
            lockDelayMs: String(lockDelayMs),
            sessionId: this.session.id,
          };
        },
        {
          attemptTimeoutMs: waitMs + this.nodes.requestTimeoutMs,
          callTimeoutMs: waitMs + this.nodes.callTimeoutMs,
          signal,
        },
      );
    } catch (e) {
      if (waitMs > 0 || signal?.aborted) {
        // A grant that comes after this client gave up must not be left to expire.
        this.cancelWait(resource, requestId).catch(() => {});
      }
      throw e;
    }
    const receivedAt = Date.now();
    if (response.code !== 'GRANTED') {
      throw FencekeeperError.fromResponse(response);
    }
    const token = BigInt(response.token);
    const ttl = Number(response.ttlMs) > 0 ? Number(response.ttlMs) : ttlMs;
    // What the cluster said was left when it answered, counted from before the attempt was sent: a
    // grant made while queued started before this attempt, so only that much is certain.
    const left = Number(response.expiresAtMs) - Number(response.nowMs);
    const validFrom = sentAt - (ttl - Math.min(left > 0 ? left : ttl, ttl));
    const lease = new Lease(this.#host, resource, token, ttl, owner, validFrom, receivedAt);
    if (this.closing) {
      lease.release().catch(() => {});
      throw new FencekeeperError('UNAVAILABLE', 'the client is closed');
    }
    if (signal?.aborted) {
      // Aborted while the grant was on its way: the caller no longer wants it.
      lease.release().catch(() => {});
      throw abortReason(signal);
    }
    this.leases.add(lease);
    this.session.add(lease);
    if (validFrom + ttl - receivedAt < ttl / 2) {
      // Little of the TTL is certain (a long wait): renew at once, so the local deadline counts from now.
      await this.session.keepAliveNow().catch(() => {});
    }
    return lease;
  }

  /**
   * A fenced write of one key with a token obtained elsewhere (`lease.write` carries its own). Resolves
   * with what the cluster answered: `status` ACCEPTED, or STALE_TOKEN (a newer token exists: stop, a
   * retry with this token never succeeds) or LEASE_EXPIRED (no newer token, but the lease has ended),
   * as the Java client's `WriteResult`. Rejects for the rest (INVALID_ARGUMENT, UNKNOWN_TOKEN,
   * UNAVAILABLE, the signal's reason).
   */
  async write(
    resource: string,
    token: bigint | number | string,
    key: string,
    value: string | Uint8Array,
    options: WriteOptions = {},
  ): Promise<WriteResult> {
    return this.sendWrite(resource, token, key, { value: toBuffer(value), delete: false }, options);
  }

  /** A fenced delete of one key. */
  async delete(
    resource: string,
    token: bigint | number | string,
    key: string,
    options: WriteOptions = {},
  ): Promise<WriteResult> {
    return this.sendWrite(resource, token, key, { value: Buffer.alloc(0), delete: true }, options);
  }

  /** A protected value with the token that wrote it, or null when the key has none. */
  async read(resource: string, key: string, options: ReadOptions = {}): Promise<StoredValue | null> {
    checkName(resource, 'resource');
    checkName(key, 'key');
    const response = await this.nodes.call(
      'Read',
      { resource, key, consistency: consistency(options.consistency) },
      { anyNode: options.consistency === 'STALE', signal: checkSignal(options.signal) },
    );
    if (response.code === 'FOUND') {
      return toStoredValue(response);
    }
    if (response.code === 'NOT_FOUND') {
      return null;
    }
    throw FencekeeperError.fromResponse(response);
  }

  /**
   * CURRENT, STALE (a newer token was issued), EXPIRED (the lease ended, no newer token) or
   * UNKNOWN_TOKEN (never issued for the resource: a resource without leases answers this), for services
   * that fence their own stores.
   */
  async validate(
    resource: string,
    token: bigint | number | string,
    options: ReadOptions = {},
  ): Promise<ValidateStatus> {
    checkName(resource, 'resource');
    const response = await this.nodes.call(
      'Validate',
      { resource, token: tokenText(token), consistency: consistency(options.consistency) },
      { anyNode: options.consistency === 'STALE', signal: checkSignal(options.signal) },
    );
    if (
      response.code === 'CURRENT' ||
      response.code === 'STALE' ||
      response.code === 'EXPIRED' ||
      response.code === 'UNKNOWN_TOKEN'
    ) {
      return response.code;
    }
    throw FencekeeperError.fromResponse(response);
  }

  /**
   * A resource's lease and newest token (`live` says whether the lease is held now), or null when the
   * cluster knows no lease of it, as `read` answers null for a missing key.
   */
  async getLease(resource: string, options: ReadOptions = {}): Promise<LeaseInfo | null> {
    checkName(resource, 'resource');
    const response = await this.nodes.call(
      'GetLease',
      { resource, consistency: consistency(options.consistency) },
      { anyNode: options.consistency === 'STALE', signal: checkSignal(options.signal) },
    );
    if (response.code === 'FOUND') {
      return toLeaseInfo(response);
    }
    if (response.code === 'NOT_FOUND') {
      return null;
    }
    throw FencekeeperError.fromResponse(response);
  }

  /** Ends the live lease of `resource`, whoever holds it (admin identities only on a TLS cluster). */
  async revoke(resource: string, reason = ''): Promise<RevokeResult> {
    checkName(resource, 'resource');
    const response = await this.nodes.call('Revoke', { resource, reason });
    if (response.code === 'REVOKED') {
      return jsonable({ status: 'REVOKED' as const, token: BigInt(response.token || '0') });
    }
    throw FencekeeperError.fromResponse(response);
  }

  /**
   * Lease events on `name` (with `prefix: true`, on every resource whose name starts with it), from
   * now on or after a position; see {@link Watch}.
   */
  watch(name: string, options: WatchOptions = {}): Watch {
    if (!(options.prefix && name === '')) {
      checkName(name, 'name');
    }
    checkSignal(options.signal);
    this.checkOpen();
    return new Watch(this.nodes, name, options);
  }

  /**
   * Releases every lease still held (within 5 s), closes the session and the connections. Leases it
   * could not release end by expiry.
   */
  close(): Promise<void> {
    if (!this.closing) {
      this.closing = (async () => {
        const releases = [...this.leases].map((lease) => lease.release().catch(() => {}));
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.all(releases),
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, CLOSE_TIMEOUT_MS);
          }),
        ]);
        clearTimeout(timer);
        this.session.close();
        this.nodes.close();
      })();
    }
    return this.closing;
  }

  /** `await using client = await connect(...)`: closes the client at the end of the block. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** @internal Answered by any node: whether one is reachable; learns the nodes' limits. */
  async ping(signal?: AbortSignal): Promise<void> {
    const response = await this.nodes.call('NodeStatus', {}, { anyNode: true, signal, failWhenAllRefuse: true });
    this.limits = response.node?.limits ?? this.limits;
  }

  private async cancelWait(resource: string, requestId: string): Promise<void> {
    await this.nodes.call('CancelWait', { resource, requestId });
  }

  private async sendWrite(
    resource: string,
    token: bigint | number | string,
    key: string,
    write: { value: Buffer; delete: boolean },
    options: WriteOptions,
  ): Promise<WriteResult> {
    checkName(resource, 'resource');
    checkName(key, 'key');
    const sent = tokenText(token);
    const signal = checkSignal(options.signal);
    this.checkLimits(resource, key, write.value);
    const response = await this.nodes.call(
      'Write',
      {
        resource,
        token: sent,
        writes: [{ key, ...write }],
        requestId: options.requestId ?? this.newRequestId(),
      },
      { signal },
    );
    if (response.code === 'ACCEPTED' || response.code === 'STALE_TOKEN' || response.code === 'LEASE_EXPIRED') {
      return toWriteResult(response, BigInt(sent));
    }
    throw FencekeeperError.fromResponse(response);
  }

  /** Refuses what the nodes would refuse for its size, before the transport's own limit can. */
  private checkLimits(resource: string, key: string, value: Buffer): void {
    const limits = this.limits;
    if (!limits) {
      return;
    }
    const over = (what: string, bytes: number, limit: number, setting: string): void => {
      if (limit > 0 && bytes > limit) {
        throw new FencekeeperError(
          'INVALID_ARGUMENT',
          `${what}: ${bytes} bytes exceed the cluster's ${setting} (${limit}); nothing was sent`,
        );
      }
    };
    over('resource', Buffer.byteLength(resource, 'utf8'), limits.maxResourceBytes, 'limits.resource-name.max-bytes');
    over('key', Buffer.byteLength(key, 'utf8'), limits.maxKeyBytes, 'limits.key.max-bytes');
    over(`value of key '${key}'`, value.byteLength, limits.maxValueBytes, 'limits.value.max-bytes');
  }

  private newRequestId(): string {
    return `${this.requestIdPrefix}-${++this.requestCounter}`;
  }

  private checkOpen(): void {
    if (this.closing) {
      throw new FencekeeperError('UNAVAILABLE', 'the client is closed');
    }
  }
}

/** Ends a lease on the cluster; NOT_HOLDER (ended already) counts as done. */
async function releaseToken(nodes: Nodes, resource: string, token: bigint): Promise<{ alreadyEnded: boolean }> {
  const response = await nodes.call('Release', { resource, token: String(token) });
  if (response.code === 'RELEASED') {
    return { alreadyEnded: response.alreadyEnded };
  }
  if (response.code === 'NOT_HOLDER') {
    return { alreadyEnded: true };
  }
  throw FencekeeperError.fromResponse(response);
}

function consistency(value: Consistency | undefined): WireConsistency {
  if (value === undefined || value === 'LINEARIZABLE') {
    return 'CONSISTENCY_LINEARIZABLE';
  }
  if (value === 'STALE') {
    return 'CONSISTENCY_STALE';
  }
  throw new FencekeeperError('INVALID_ARGUMENT', `consistency: '${String(value)}' is not LINEARIZABLE or STALE`);
}

function checkName(value: unknown, what: string): void {
  if (typeof value !== 'string' || value.length === 0) {
    throw new FencekeeperError('INVALID_ARGUMENT', `${what}: must be a non-empty string`);
  }
}

function positiveInt(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new FencekeeperError('INVALID_ARGUMENT', `${what}: ${String(value)} is not a positive whole number of ms`);
  }
  return value;
}

function nonNegativeInt(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new FencekeeperError('INVALID_ARGUMENT', `${what}: ${String(value)} is not a whole number of ms >= 0`);
  }
  return value;
}

function tokenText(token: bigint | number | string): string {
  let value: bigint;
  try {
    value = BigInt(token);
  } catch {
    throw new FencekeeperError('INVALID_ARGUMENT', `token: '${String(token)}' is not a fencing token`);
  }
  if (value <= 0n || value >= 1n << 64n) {
    throw new FencekeeperError('INVALID_ARGUMENT', `token: ${value} is not a fencing token (1..2^64-1)`);
  }
  return value.toString();
}

function toBuffer(value: string | Uint8Array): Buffer {
  if (typeof value === 'string') {
    return Buffer.from(value, 'utf8');
  }
  if (value instanceof Uint8Array) {
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  }
  throw new FencekeeperError('INVALID_ARGUMENT', 'value: must be a string, Buffer or Uint8Array');
}
