/**
 * The client's one session stream to the leader. Every lease the client acquires carries the session's
 * id, so one keep-alive renews all of them (one log entry per keep-alive, each lease by its own TTL), and
 * the events of those leases come back on the stream. A broken stream (leader change, restart, network)
 * is re-opened with the same id from the last event seen, so no end of a lease goes unnoticed and leases
 * still live on the cluster stay held. Internal to the package.
 */
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { isAfter, toEvent, type Position } from './convert';
import { FencekeeperError } from './errors';
import { backgroundSleep, isFinal, sleep, type Nodes } from './transport';
import type { LeaseEvent } from './types';
import type { WireSessionRequest, WireSessionResponse } from './wire';

/** What the session needs of a held lease. */
export interface SessionLease {
  readonly resource: string;
  readonly token: bigint;
  readonly ttlMs: number;
  /** Local time the grant's answer arrived: keep-alives sent after it renew the lease. */
  readonly grantedAt: number;
  /** A keep-alive sent at `sentAt` (local time) renewed the lease. */
  renewed(sentAt: number): void;
  /** The cluster reported the lease's end (its event), or a check found it gone. */
  ended(event: LeaseEvent | undefined, code?: string): void;
}

interface KeepAliveAnswer {
  code: string;
  renewed: number;
  sentAt: number;
}

const INT32_MAX = 2147483647;
/** Between keep-alives while no lease is held: keeps a stream's failure noticed without log traffic. */
const IDLE = -1;

export class Session {
  readonly id = randomBytes(18).toString('base64url');
  private stream: grpc.ClientDuplexStream<WireSessionRequest, WireSessionResponse> | undefined;
  private address: string | undefined;
  private opening: Promise<void> | undefined;
  private position: Position = { index: 0, seq: 0 };
  private readonly leases = new Map<string, SessionLease>();
  private seq = 0;
  private readonly pending = new Map<number, { sentAt: number; resolve: (a: KeepAliveAnswer) => void }>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private reopening = false;
  private verifying: Promise<void> | undefined;

  constructor(
    private readonly nodes: Nodes,
    private readonly owner: string,
  ) {}

  /** Opens the stream if it is not open, within the client's call timeout. */
  async ensureOpen(): Promise<void> {
    if (this.stream) {
      return;
    }
    if (!this.opening) {
      this.opening = this.openWithin(this.nodes.callTimeoutMs).finally(() => {
        this.opening = undefined;
      });
    }
    return this.opening;
  }

  add(lease: SessionLease): void {
    this.leases.set(key(lease.resource, lease.token), lease);
    this.schedule();
  }

  remove(lease: SessionLease): void {
    this.leases.delete(key(lease.resource, lease.token));
    this.schedule();
  }

  /**
   * Sends one keep-alive now and waits for its answer (RENEWED: every lease granted before it was sent
   * is renewed), or UNAVAILABLE when the stream broke or no answer came within the request timeout.
   */
  async keepAliveNow(): Promise<KeepAliveAnswer> {
    await this.ensureOpen();
    return this.sendKeepAlive();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.failPending('the client is closed');
    const stream = this.stream;
    this.stream = undefined;
    if (stream) {
      stream.removeAllListeners();
      stream.on('error', () => {});
      stream.cancel();
    }
  }

  private async openWithin(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = 'no node tried';
    for (let attempt = 0; !this.closed; attempt++) {
      const address = this.nodes.target();
      try {
        await this.openAt(address, Math.min(this.nodes.requestTimeoutMs, Math.max(deadline - Date.now(), 1)));
        return;
      } catch (e) {
        if (isFinal(e) || (e instanceof FencekeeperError && e.code !== 'NOT_LEADER' && e.code !== 'UNAVAILABLE')) {
          throw e;
        }
        last = (e as Error).message;
      }
      const leader = this.nodes.leaderAddress();
      const pause = leader !== undefined && leader !== address ? 0 : Math.min(50 * 2 ** Math.min(attempt, 4), 500);
      if (Date.now() + pause >= deadline) {
        break;
      }
      await sleep(pause);
    }
    throw new FencekeeperError(
      'UNAVAILABLE',
      `no session could be opened within ${timeoutMs} ms (last: ${last}) at ${this.nodes.peers.join(',')}`,
    );
  }

  /** One attempt: the stream is open when the node answered `opened`. */
  private openAt(address: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const stream = this.nodes.stub(address).Session(new grpc.Metadata());
      let settled = false;
      const fail = (error: FencekeeperError): void => {
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          stream.removeAllListeners();
          stream.on('error', () => {});
          stream.cancel();
          reject(error);
        }
      };
      const timer = setTimeout(
        () => fail(new FencekeeperError('UNAVAILABLE', `${address} did not open the session within ${timeoutMs} ms`)),
        timeoutMs,
      );
      stream.on('data', (message: WireSessionResponse) => {
        if (settled) {
          return;
        }
        if (message.kind === 'opened' && message.opened) {
          settled = true;
          clearTimeout(timer);
          stream.removeAllListeners();
          this.opened(stream, address, Number(message.opened.appliedIndex));
          resolve();
        } else if (message.kind === 'error' && message.error) {
          if (message.error.code === 'NOT_LEADER') {
            this.nodes.redirected(address, message.error.leaderAddress);
          }
          if (message.error.code === 'COMPACTED') {
            // Events after our position are gone: open again from now, then check every lease.
            this.position = { index: 0, seq: 0 };
            this.verifyLeases();
            fail(new FencekeeperError('UNAVAILABLE', `${address}: ${message.error.message}`));
            return;
          }
          fail(FencekeeperError.fromResponse(message.error));
        }
      });
      stream.on('error', (error: grpc.ServiceError) => {
        this.nodes.failed(address);
        const details = error.details || error.message;
        void this.nodes.tlsRefusal(address, details, error).then((refusal) =>
          fail(refusal ?? new FencekeeperError('UNAVAILABLE', `${address}: ${details}`, {}, { cause: error })),
        );
      });
      stream.on('end', () => fail(new FencekeeperError('UNAVAILABLE', `${address} ended the session stream`)));
      stream.write({
        open: {
          sessionId: this.id,
          owner: this.owner,
          afterIndex: String(this.position.index),
          afterSeq: this.position.seq,
        },
      });
    });
  }

  private opened(stream: grpc.ClientDuplexStream<WireSessionRequest, WireSessionResponse>, address: string, appliedIndex: number): void {
    this.stream = stream;
    this.address = address;
    this.nodes.answered(address);
    if (this.position.index === 0 && this.position.seq === 0) {
      // Opened for new events only: from here on, a re-open asks for everything after this point.
      this.position = { index: appliedIndex, seq: INT32_MAX };
    }
    stream.on('data', (message: WireSessionResponse) => this.onMessage(message));
    stream.on('error', () => this.broken(stream));
    stream.on('end', () => this.broken(stream));
    if (this.leases.size > 0) {
      // After a failover, renew at once rather than a third of a TTL later.
      this.sendKeepAlive().catch(() => {});
    }
    this.schedule();
  }

  private onMessage(message: WireSessionResponse): void {
    switch (message.kind) {
      case 'event': {
        const event = toEvent(message.event!);
        if (isAfter(event, this.position)) {
          this.position = { index: event.index, seq: event.seq };
        }
        if (event.type === 'EXPIRED' || event.type === 'REVOKED' || event.type === 'RELEASED') {
          this.leases.get(key(event.resource, event.token))?.ended(event);
        }
        break;
      }
      case 'keepAlive': {
        const answer = message.keepAlive!;
        const waiting = this.pending.get(Number(answer.seq));
        if (waiting) {
          this.pending.delete(Number(answer.seq));
          waiting.resolve({ code: answer.code, renewed: answer.renewed, sentAt: waiting.sentAt });
        }
        break;
      }
      case 'error': {
        const error = message.error!;
        if (error.code === 'NOT_LEADER' && this.address) {
          this.nodes.redirected(this.address, error.leaderAddress);
        }
        if (error.code === 'COMPACTED') {
          this.position = { index: 0, seq: 0 };
          this.verifyLeases();
        }
        // The node ends the stream after an error; broken() re-opens it.
        break;
      }
      default:
        break;
    }
  }

  private broken(stream: grpc.ClientDuplexStream<WireSessionRequest, WireSessionResponse>): void {
    if (this.stream !== stream) {
      return;
    }
    this.stream = undefined;
    stream.removeAllListeners();
    stream.on('error', () => {});
    stream.cancel();
    if (this.address) {
      this.nodes.failed(this.address);
    }
    this.failPending('the session stream broke');
    this.reopen();
  }

  /** Re-opens the stream in the background for as long as leases are held. */
  private reopen(): void {
    if (this.reopening || this.closed || this.leases.size === 0) {
      return;
    }
    this.reopening = true;
    void (async () => {
      try {
        for (let attempt = 0; !this.closed && !this.stream && this.leases.size > 0; attempt++) {
          try {
            await this.ensureOpen();
          } catch (e) {
            if (isFinal(e) || (e instanceof FencekeeperError && e.code !== 'UNAVAILABLE')) {
              // Refused for good (PERMISSION_DENIED, INVALID_ARGUMENT, a refused TLS handshake): the leases
              // can no longer be renewed; their deadlines will pass.
              return;
            }
            await backgroundSleep(Math.min(100 * 2 ** Math.min(attempt, 3), 1000));
          }
        }
      } finally {
        this.reopening = false;
      }
    })();
  }

  private sendKeepAlive(): Promise<KeepAliveAnswer> {
    const stream = this.stream;
    if (!stream) {
      return Promise.reject(new FencekeeperError('UNAVAILABLE', 'the session stream is not open'));
    }
    const seq = ++this.seq;
    const sentAt = Date.now();
    const answer = new Promise<KeepAliveAnswer>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.pending.delete(seq)) {
          reject(new FencekeeperError('UNAVAILABLE', `no keep-alive answer within ${this.nodes.requestTimeoutMs} ms`));
          // A stream that stops answering is as good as broken.
          this.broken(stream);
        }
      }, this.nodes.requestTimeoutMs);
      this.pending.set(seq, {
        sentAt,
        resolve: (a) => {
          clearTimeout(timer);
          if (a.code === 'UNAVAILABLE') {
            reject(new FencekeeperError('UNAVAILABLE', 'the session stream broke'));
          } else {
            resolve(a);
          }
        },
      });
    });
    stream.write({ keepAlive: { seq: String(seq) } });
    return answer.then((a) => {
      this.answered(a);
      return a;
    });
  }

  private answered(answer: KeepAliveAnswer): void {
    if (answer.code !== 'RENEWED') {
      return;
    }
    let covered = 0;
    for (const lease of [...this.leases.values()]) {
      if (lease.grantedAt <= answer.sentAt) {
        covered++;
        lease.renewed(answer.sentAt);
      }
    }
    if (answer.renewed < covered) {
      // The cluster renewed fewer leases than this client holds: some ended without their event
      // reaching this stream yet. Ask about each.
      this.verifyLeases();
    }
  }

  private failPending(why: string): void {
    for (const [seq, waiting] of this.pending) {
      this.pending.delete(seq);
      waiting.resolve({ code: 'UNAVAILABLE', renewed: 0, sentAt: waiting.sentAt });
    }
    void why;
  }

  /** Checks every held lease against the cluster; those no longer live there are ended. */
  private verifyLeases(): void {
    if (this.verifying || this.closed) {
      return;
    }
    this.verifying = (async () => {
      for (const lease of [...this.leases.values()]) {
        try {
          const r = await this.nodes.call('GetLease', { resource: lease.resource });
          if (!(r.live && BigInt(r.token || '0') === lease.token)) {
            lease.ended(undefined, r.code);
          }
        } catch {
          // Unreachable: the local deadline decides meanwhile; the next re-open checks again.
        }
      }
    })().finally(() => {
      this.verifying = undefined;
    });
  }

  /** Keep-alives every third of the shortest TTL held. */
  private schedule(): void {
    clearTimeout(this.timer);
    if (this.closed) {
      return;
    }
    let interval = IDLE;
    for (const lease of this.leases.values()) {
      const third = Math.max(Math.floor(lease.ttlMs / 3), 20);
      interval = interval === IDLE ? third : Math.min(interval, third);
    }
    if (interval === IDLE) {
      return;
    }
    this.timer = setTimeout(() => {
      if (this.stream) {
        this.sendKeepAlive().catch(() => {});
      } else {
        this.reopen();
      }
      this.schedule();
    }, interval);
    this.timer.unref();
  }
}

function key(resource: string, token: bigint): string {
  return `${resource}\u0000${token}`;
}

export type { KeepAliveAnswer };
