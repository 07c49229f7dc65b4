import type { ResultCode } from './codes';

/** Mutual TLS: PEM contents (string or Buffer), or the files that hold them. */
export interface TlsOptions {
  /** CA certificates trusted for the nodes. */
  ca?: string | Buffer;
  /** This client's certificate chain. */
  cert?: string | Buffer;
  /** This client's private key. */
  key?: string | Buffer;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

export interface ConnectOptions {
  /**
   * The nodes' client endpoints (`client.port` of each node, by default its Raft port + 200), as an
   * array or a comma-separated string of `host:port`. Default: the FENCEKEEPER_ENDPOINTS environment
   * variable. A Raft member address (`n1@host:port`) is refused at once, naming the client port to use.
   */
  endpoints?: string[] | string;
  /**
   * @deprecated The same as `endpoints` (warns once); the FENCEKEEPER_PEERS environment variable is read,
   * with the same warning, when neither is given and FENCEKEEPER_ENDPOINTS is not set.
   */
  peers?: string[] | string;
  /** Stops connecting: `connect` rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Mutual TLS, as the nodes' `tls.*` settings require; omit for a plaintext cluster. */
  tls?: TlsOptions;
  /** Owner label of this client's leases (default `host:pid`). */
  owner?: string;
  /** How long one attempt at one node may take, in ms (default 3000, or the call timeout if shorter). */
  requestTimeoutMs?: number;
  /**
   * How long one call may take in all, retries through an election included (default 15000). Exactly
   * this long: no attempt outlasts it. A waiting acquire adds its `waitMs`.
   */
  callTimeoutMs?: number;
}

/** Cancellation of one call: it rejects with the signal's reason (an `AbortError` unless you gave one). */
export interface Abortable {
  /**
   * Ends the call when it aborts. A command (acquire, write) may or may not have been applied then, as
   * with UNAVAILABLE; an acquire that was granted meanwhile is released.
   */
  signal?: AbortSignal;
}

export interface AcquireOptions extends Abortable {
  /** The lease's time to live, in ms; the client keeps it alive until `release()` or loss. */
  ttlMs: number;
  /** Wait in line (FIFO) up to this long for the resource, in ms (default 0: answer HELD at once). */
  waitMs?: number;
  /** Owner label of this lease (default the client's). */
  owner?: string;
  /** After this lease ends involuntarily, nobody may acquire the resource for this long, in ms. */
  lockDelayMs?: number;
  /** A retry with the same id returns the same lease (default: a fresh id per call). */
  requestId?: string;
}

export type Consistency = 'LINEARIZABLE' | 'STALE';

export interface ReadOptions extends Abortable {
  /** LINEARIZABLE (default) is answered by the leader; STALE by any node, from what it has applied. */
  consistency?: Consistency;
}

/**
 * Every result serializes to JSON as the command line's `--json` prints it: `JSON.stringify(result)`
 * gives tokens as decimal strings and bytes as base64 (its `toJSON`, which `console.log` does not show).
 */
export interface Jsonable {
  toJSON(): Record<string, unknown>;
}

/** A protected value and the token that wrote it. */
export interface StoredValue extends Jsonable {
  value: Buffer;
  /** The highest token whose write the key accepted. */
  acceptedToken: bigint;
  /** Count of accepted writes of the key. */
  version: number;
  /** The cluster's time of the last accepted write. */
  writtenAtMs: number;
}

/**
 * What the cluster answered a fenced write, as the Java client's `WriteResult`: a refusal because of
 * the token is an answer, not an error.
 */
export interface WriteResult extends Jsonable {
  /**
   * ACCEPTED: every key changed. STALE_TOKEN: a newer token exists, someone else owns the resource now;
   * stop, retrying with this token never succeeds. LEASE_EXPIRED: no newer token, but the lease ended.
   */
  status: 'ACCEPTED' | 'STALE_TOKEN' | 'LEASE_EXPIRED';
  /** The token the write carried. */
  sentToken: bigint;
  /** ACCEPTED: the key's count of accepted writes, after this one (0 otherwise). */
  version: number;
  /** ACCEPTED: the token now recorded for the key (0n otherwise). */
  acceptedToken: bigint;
  /** STALE_TOKEN, LEASE_EXPIRED: the newest token issued for the resource, when the cluster said. */
  currentToken?: bigint;
  /** STALE_TOKEN: the key whose check failed, when one did. */
  key?: string;
  /** The cluster's words for a refusal. */
  message?: string;
}

export interface WriteOptions extends Abortable {
  /** A retry with the same id under the same lease is applied once (default: a fresh id per call). */
  requestId?: string;
}

/**
 * Which cluster each endpoint belongs to, as each node said (`client.clusterIds()`): endpoints given as
 * one cluster must all belong to the same. A cluster's id is minted when it first forms and kept in every
 * member's storage.
 */
export interface EndpointClusters {
  /** By endpoint (host:port), the cluster id its node reported; '' for a node that knows none yet. */
  clusterIds: Record<string, string>;
  /** By endpoint, why its node gave no answer in time. */
  unanswered: Record<string, string>;
  /** Whether no two endpoints that answered report different cluster ids. */
  oneCluster: boolean;
  /** The one id the endpoints that know one report; undefined if none does or they differ. */
  clusterId?: string;
}

/** A validate's answer; UNKNOWN_TOKEN: the token was never issued for the resource. */
export type ValidateStatus = 'CURRENT' | 'STALE' | 'EXPIRED' | 'UNKNOWN_TOKEN';

/** What `revoke` ended. */
export interface RevokeResult extends Jsonable {
  status: 'REVOKED';
  /** The token of the lease it ended. */
  token: bigint;
}

export interface LeaseInfo extends Jsonable {
  status: 'FOUND';
  live: boolean;
  /** The live lease's token (0n when none). */
  token: bigint;
  /** The newest token issued for the resource. */
  currentToken: bigint;
  holderOwner: string;
  expiresAtMs: number;
  ttlMs: number;
}

export type LeaseEventType = 'ACQUIRED' | 'RENEWED' | 'RELEASED' | 'EXPIRED' | 'REVOKED';

/** One lease event, in commit order; `(index, seq)` is its position, to resume a watch from. */
export interface LeaseEvent extends Jsonable {
  index: number;
  seq: number;
  type: LeaseEventType;
  resource: string;
  token: bigint;
  owner: string;
  expiresAtMs: number;
  atMs: number;
  requestId?: string;
  sessionId?: string;
}

export interface WatchOptions {
  /** Ends the watch when it aborts: the stream is closed and iteration throws the signal's reason. */
  signal?: AbortSignal;
  /** Watch every resource whose name starts with `name` (default: exactly `name`). */
  prefix?: boolean;
  /**
   * Only events after this position: (index, seq) of the last event seen, or (0, 2147483647) for every
   * event the cluster still keeps. Default: from now on (after the cluster's applied index).
   */
  afterIndex?: number;
  afterSeq?: number;
}

/** Why `onLost` was called. */
export interface LostReason {
  /**
   * LEASE_LOST: the cluster ended the lease (expiry, revoke, a newer grant); DEADLINE_PASSED: no renewal
   * succeeded before the local deadline (the cluster could not be reached in time).
   */
  reason: 'LEASE_LOST' | 'DEADLINE_PASSED';
  /** The event that ended it, when the cluster reported one. */
  event?: LeaseEvent;
  /** The code the cluster answered when the client checked the lease, if it did. */
  code?: ResultCode;
}
