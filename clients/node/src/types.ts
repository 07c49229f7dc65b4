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
   * The nodes' client addresses (`client.port` of each node, by default its Raft port + 200), as an
   * array or a comma-separated string of `host:port`.
   */
  peers: string[] | string;
  /** Mutual TLS, as the nodes' `tls.*` settings require; omit for a plaintext cluster. */
  tls?: TlsOptions;
  /** Owner label of this client's leases (default `host:pid`). */
  owner?: string;
  /** How long one attempt at one node may take, in ms (default 3000). */
  requestTimeoutMs?: number;
  /** How long one call may take in all, retries through an election included (default 15000). */
  callTimeoutMs?: number;
}

export interface AcquireOptions {
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

export interface ReadOptions {
  /** LINEARIZABLE (default) is answered by the leader; STALE by any node, from what it has applied. */
  consistency?: Consistency;
}

/** A protected value and the token that wrote it. */
export interface StoredValue {
  value: Buffer;
  /** The highest token whose write the key accepted. */
  acceptedToken: bigint;
  /** Count of accepted writes of the key. */
  version: number;
  /** The cluster's time of the last accepted write. */
  writtenAtMs: number;
}

export interface WriteResult {
  status: 'ACCEPTED';
  /** The key's count of accepted writes, after this one. */
  version: number;
  acceptedToken: bigint;
}

export interface WriteOptions {
  /** A retry with the same id under the same lease is applied once (default: a fresh id per call). */
  requestId?: string;
}

export type ValidateStatus = 'CURRENT' | 'STALE' | 'EXPIRED';

export interface LeaseInfo {
  status: 'FOUND' | 'NOT_FOUND';
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
export interface LeaseEvent {
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
