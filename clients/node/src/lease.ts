import { FencekeeperError } from './errors';
import type { LeaseEvent, LostReason, ReadOptions, StoredValue, WriteOptions, WriteResult } from './types';

export type LeaseState = 'HELD' | 'LOST' | 'RELEASED';

/** @internal What a lease needs of the client that acquired it: its calls, and to be let go. */
export interface LeaseHost {
  write(resource: string, token: bigint, key: string, value: string | Uint8Array, options?: WriteOptions): Promise<WriteResult>;
  delete(resource: string, token: bigint, key: string, options?: WriteOptions): Promise<WriteResult>;
  read(resource: string, key: string, options?: ReadOptions): Promise<StoredValue | null>;
  release(resource: string, token: bigint): Promise<{ alreadyEnded: boolean }>;
  /** The lease no longer needs keeping alive. */
  forget(lease: Lease): void;
}

/**
 * A lease the client holds: its fencing `token`, kept alive by the client's session until `release()`
 * or until it is lost. Every `write` carries the token, so a write after the lease was lost is refused
 * by the cluster (STALE_TOKEN or LEASE_EXPIRED) however late it arrives.
 *
 * `isValid()` is advisory: it is measured against a local deadline that counts the TTL from before each
 * renewal was sent, so it turns false no later than the cluster ends the lease, but a pause can come
 * right after it said true. The token is what protects data.
 */
export class Lease {
  private state: LeaseState = 'HELD';
  private deadline: number;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private readonly lostListeners: Array<(reason: LostReason) => void> = [];
  private lostReason: LostReason | undefined;

  /** @internal */
  constructor(
    private readonly client: LeaseHost,
    readonly resource: string,
    readonly token: bigint,
    readonly ttlMs: number,
    readonly owner: string,
    /** Local time from which the TTL is counted: no later than the cluster's grant. */
    validFrom: number,
    readonly grantedAt: number,
  ) {
    this.deadline = validFrom + ttlMs;
    this.armDeadline();
  }

  /** HELD while kept alive; LOST once the cluster ended it or the local deadline passed; RELEASED. */
  get currentState(): LeaseState {
    return this.state;
  }

  /** Whether the lease is held and its local deadline has not passed. Advisory; see the class comment. */
  isValid(): boolean {
    return this.state === 'HELD' && Date.now() < this.deadline;
  }

  /** Local time (ms since the epoch) before which the cluster cannot have ended the lease by expiry. */
  get deadlineMs(): number {
    return this.deadline;
  }

  /**
   * A fenced write of one key of the lease's resource, carrying the token; resolves with the cluster's
   * answer (ACCEPTED, STALE_TOKEN or LEASE_EXPIRED: see {@link WriteResult}). Once the lease is lost or
   * released it rejects at once with LEASE_LOST, sending nothing.
   */
  write(key: string, value: string | Uint8Array, options: WriteOptions = {}): Promise<WriteResult> {
    const ended = this.endedError();
    return ended ? Promise.reject(ended) : this.client.write(this.resource, this.token, key, value, options);
  }

  /** A fenced delete of one key of the lease's resource; as `write`. */
  delete(key: string, options: WriteOptions = {}): Promise<WriteResult> {
    const ended = this.endedError();
    return ended ? Promise.reject(ended) : this.client.delete(this.resource, this.token, key, options);
  }

  /** A protected value of the lease's resource, or null when the key has none. */
  read(key: string, options: ReadOptions = {}): Promise<StoredValue | null> {
    return this.client.read(this.resource, key, options);
  }

  /**
   * Calls `listener` once when the lease is lost (not after `release()`); at once (on the next tick) if
   * it already is. Returns a function that unregisters it.
   */
  onLost(listener: (reason: LostReason) => void): () => void {
    if (this.state === 'LOST' && this.lostReason) {
      const reason = this.lostReason;
      setImmediate(() => safely(listener, reason));
      return () => {};
    }
    this.lostListeners.push(listener);
    return () => {
      const i = this.lostListeners.indexOf(listener);
      if (i >= 0) {
        this.lostListeners.splice(i, 1);
      }
    };
  }

  /**
   * Ends the lease on the cluster and stops keeping it alive. Resolves with whether it had already
   * ended before (`alreadyEnded`); rejects with a FencekeeperError when the cluster could not be reached
   * (the lease then ends by expiry).
   */
  async release(): Promise<{ alreadyEnded: boolean }> {
    const wasLost = this.state === 'LOST';
    this.stop('RELEASED');
    if (wasLost) {
      return { alreadyEnded: true };
    }
    return this.client.release(this.resource, this.token);
  }

  /**
   * `await using lease = await client.acquire(...)`: releases the lease at the end of the block. A
   * release the cluster could not be reached for is not thrown: the lease then ends by expiry.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.state === 'HELD') {
      await this.release().catch(() => {});
    }
  }

  /** For logs and JSON: the token as a string. */
  toJSON(): Record<string, unknown> {
    return {
      resource: this.resource,
      token: this.token.toString(),
      ttlMs: this.ttlMs,
      owner: this.owner,
      state: this.state,
      deadlineMs: this.deadline,
    };
  }

  /** @internal A keep-alive sent at `sentAt` renewed the lease. */
  renewed(sentAt: number): void {
    if (this.state === 'HELD' && sentAt + this.ttlMs > this.deadline) {
      this.deadline = sentAt + this.ttlMs;
      this.armDeadline();
    }
  }

  /** @internal The cluster reported the lease ended (its event), or a check found it gone. */
  ended(event: LeaseEvent | undefined, code?: string): void {
    if (this.state !== 'HELD') {
      return;
    }
    const reason: LostReason = { reason: 'LEASE_LOST' };
    if (event) {
      reason.event = event;
    }
    if (code) {
      reason.code = code as LostReason['code'];
    }
    this.lose(reason);
  }

  toString(): string {
    return `Lease(${this.resource}, token ${this.token}, ${this.state})`;
  }

  /** Why a write may not be sent any more, or undefined while the lease is held. */
  private endedError(): FencekeeperError | undefined {
    if (this.state === 'HELD') {
      return undefined;
    }
    const why = this.state === 'RELEASED' ? 'was released' : `was lost (${this.lostReason?.reason ?? 'LEASE_LOST'})`;
    return new FencekeeperError(
      'LEASE_LOST',
      `the lease on '${this.resource}' (token ${this.token}) ${why}; nothing was sent`,
      { sentToken: this.token },
    );
  }

  private lose(reason: LostReason): void {
    this.lostReason = reason;
    this.stop('LOST');
    for (const listener of this.lostListeners.splice(0)) {
      setImmediate(() => safely(listener, reason));
    }
  }

  private stop(state: LeaseState): void {
    this.state = state;
    clearTimeout(this.deadlineTimer);
    this.client.forget(this);
  }

  private armDeadline(): void {
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = setTimeout(() => this.deadlinePassed(), Math.max(this.deadline - Date.now(), 0));
    this.deadlineTimer.unref();
  }

  private deadlinePassed(): void {
    if (this.state !== 'HELD') {
      return;
    }
    if (Date.now() < this.deadline) {
      this.armDeadline();
      return;
    }
    this.lose({ reason: 'DEADLINE_PASSED' });
    // The session would keep renewing it once the cluster answers again; nobody holds it any more.
    this.client.release(this.resource, this.token).catch(() => {});
  }
}

function safely(listener: (reason: LostReason) => void, reason: LostReason): void {
  try {
    listener(reason);
  } catch (e) {
    process.emitWarning(`fencekeeper: an onLost listener threw: ${(e as Error)?.message ?? e}`);
  }
}
