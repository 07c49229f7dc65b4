/**
 * The nodes of one cluster and how a call reaches the right one: a channel per client address, the
 * leader as the last NOT_LEADER answer named it, and retries through elections and dead nodes until the
 * call's time is up. Internal to the package.
 */
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { FencekeeperError } from './errors';
import type { TlsOptions } from './types';
import { service, unaryStub, type ServiceStub, type UnaryMethod, type WireResponse } from './wire';

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  // A restarted node should be reached again within a second, not after grpc-js's default backoff
  // (up to two minutes); the client's own retry loop paces the attempts.
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
  'grpc.min_reconnect_backoff_ms': 100,
  // Values reach limits.value.max-bytes (1 MiB by default); answers carry at most one such value.
  'grpc.max_receive_message_length': 16 * 1024 * 1024,
};

/** gRPC statuses after which another node, or the same one a little later, may answer. */
const RETRYABLE = new Set<grpc.status>([
  grpc.status.UNAVAILABLE,
  grpc.status.DEADLINE_EXCEEDED,
  grpc.status.CANCELLED,
  grpc.status.UNKNOWN,
  grpc.status.INTERNAL,
  grpc.status.ABORTED,
]);

export interface CallOptions {
  /** Per attempt; the request timeout unless longer (a waiting acquire). */
  attemptTimeoutMs?: number;
  /** The call in all. */
  callTimeoutMs?: number;
  /** Sent to any node rather than the leader (stale queries): still follows NOT_LEADER. */
  anyNode?: boolean;
}

export function parsePeers(peers: string[] | string | undefined): string[] {
  const list = (Array.isArray(peers) ? peers : String(peers ?? '').split(','))
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  if (list.length === 0) {
    throw new FencekeeperError('INVALID_ARGUMENT', 'peers: name at least one node as host:port');
  }
  for (const peer of list) {
    if (!/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(peer) || Number(peer.split(':').pop()) > 65535) {
      throw new FencekeeperError('INVALID_ARGUMENT', `peers: '${peer}' is not host:port`);
    }
  }
  return [...new Set(list)];
}

export function credentials(tls: TlsOptions | undefined): grpc.ChannelCredentials {
  if (!tls) {
    return grpc.credentials.createInsecure();
  }
  const read = (pem: string | Buffer | undefined, file: string | undefined, what: string): Buffer | undefined => {
    if (pem !== undefined) {
      return Buffer.isBuffer(pem) ? pem : Buffer.from(pem);
    }
    if (file === undefined) {
      return undefined;
    }
    try {
      return readFileSync(file);
    } catch (e) {
      throw new FencekeeperError('INVALID_ARGUMENT', `tls.${what}File: cannot read '${file}': ${(e as Error).message}`);
    }
  };
  const ca = read(tls.ca, tls.caFile, 'ca');
  const cert = read(tls.cert, tls.certFile, 'cert');
  const key = read(tls.key, tls.keyFile, 'key');
  if ((cert === undefined) !== (key === undefined)) {
    throw new FencekeeperError('INVALID_ARGUMENT', 'tls: cert and key go together');
  }
  return grpc.credentials.createSsl(ca ?? null, key ?? null, cert ?? null);
}

/** A pause inside a call someone awaits: it keeps the process alive, as the call does. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A pause of the client's own background work (re-opening the session): it keeps no process alive. */
export const backgroundSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms).unref());

export class Nodes {
  private readonly stubs = new Map<string, ServiceStub>();
  private leader: string | undefined;
  private next = 0;
  private closed = false;

  constructor(
    readonly peers: readonly string[],
    private readonly creds: grpc.ChannelCredentials,
    readonly requestTimeoutMs: number,
    readonly callTimeoutMs: number,
  ) {}

  stub(address: string): ServiceStub {
    let stub = this.stubs.get(address);
    if (!stub) {
      const Service = service();
      stub = new Service(address, this.creds, CHANNEL_OPTIONS);
      this.stubs.set(address, stub);
    }
    return stub;
  }

  /** The node to try next: the known leader, else the peers in turn. */
  target(): string {
    return this.leader ?? this.peers[this.next++ % this.peers.length];
  }

  /** A NOT_LEADER answer from `from` named `leaderAddress` (empty: no leader known yet). */
  redirected(from: string, leaderAddress: string): void {
    // A leader elected but not yet ready names itself: retry there shortly.
    this.leader = leaderAddress || (this.leader === from ? undefined : this.leader);
  }

  /** `address` did not answer: stop assuming it leads. */
  failed(address: string): void {
    if (this.leader === address) {
      this.leader = undefined;
    }
  }

  /** Answered by a node that was asked as the leader and did not refuse. */
  answered(address: string): void {
    this.leader = address;
  }

  /** The leader as a NOT_LEADER answer or a successful call named it, if any. */
  leaderAddress(): string | undefined {
    return this.leader;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Sends one request (or the request `request()` makes for each attempt) until a node that may answer it does (the leader, or any node for `anyNode`),
   * or the call's time is up (then UNAVAILABLE). Every answer that reached fencekeeper, rejections
   * included, is returned as it is; only NOT_LEADER is followed.
   */
  async call(method: UnaryMethod, request: object | (() => object), options: CallOptions = {}): Promise<WireResponse> {
    const attemptTimeout = Math.max(options.attemptTimeoutMs ?? 0, this.requestTimeoutMs);
    const callTimeout = Math.max(options.callTimeoutMs ?? this.callTimeoutMs, attemptTimeout);
    const deadline = Date.now() + callTimeout;
    let lastProblem = 'no node tried';
    let lastResponse: WireResponse | undefined;
    for (let attempt = 0; ; attempt++) {
      if (this.closed) {
        throw new FencekeeperError('UNAVAILABLE', 'the client is closed');
      }
      const address = this.target();
      const left = deadline - Date.now();
      let redirectedElsewhere = false;
      try {
        const body = typeof request === 'function' ? request() : request;
        const response = await this.once(address, method, body, Math.min(attemptTimeout, Math.max(left, 1)));
        switch (response.code) {
          case 'NOT_LEADER':
          case 'UNAVAILABLE':
            // NOT_LEADER: refused before the log, nothing changed. UNAVAILABLE: the node lost leadership
            // while the command was pending; a retry with the same request id is applied at most once.
            this.redirected(address, response.leaderAddress);
            redirectedElsewhere = this.leader !== undefined && this.leader !== address;
            lastProblem = `${address}: ${response.code}${response.message ? ` (${response.message})` : ''}`;
            break;
          case 'OVERLOADED':
            // Nothing changed; the node asks to retry later.
            lastResponse = response;
            lastProblem = `${address}: OVERLOADED`;
            break;
          default:
            if (!options.anyNode) {
              this.answered(address);
            }
            return response;
        }
      } catch (e) {
        const error = e as grpc.ServiceError;
        if (typeof error.code !== 'number') {
          throw e;
        }
        if (!RETRYABLE.has(error.code)) {
          throw transportError(error, address);
        }
        this.failed(address);
        lastProblem = `${address}: ${error.details || grpc.status[error.code]}`;
      }
      const pause = redirectedElsewhere ? 0 : Math.min(50 * 2 ** Math.min(attempt, 4), 500);
      if (Date.now() + pause >= deadline) {
        if (lastResponse && lastProblem.endsWith('OVERLOADED')) {
          return lastResponse;
        }
        throw new FencekeeperError(
          'UNAVAILABLE',
          `no node answered ${method} within ${callTimeout} ms (last: ${lastProblem}) at ${this.peers.join(',')}`,
        );
      }
      if (pause > 0) {
        await sleep(pause);
      }
    }
  }

  private once(address: string, method: UnaryMethod, request: object, timeoutMs: number): Promise<WireResponse> {
    const stub = unaryStub(this.stub(address), method);
    return new Promise((resolve, reject) => {
      stub(request, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (error, response) => {
        if (error) {
          reject(error);
        } else {
          resolve(response as WireResponse);
        }
      });
    });
  }

  close(): void {
    this.closed = true;
    for (const stub of this.stubs.values()) {
      stub.close();
    }
    this.stubs.clear();
  }
}

/** A gRPC status that no retry can change, as the result code it stands for. */
export function transportError(error: grpc.ServiceError, address: string): FencekeeperError {
  const detail = `${address}: ${error.details || grpc.status[error.code]}`;
  switch (error.code) {
    case grpc.status.PERMISSION_DENIED:
    case grpc.status.UNAUTHENTICATED:
      return new FencekeeperError('PERMISSION_DENIED', detail);
    case grpc.status.RESOURCE_EXHAUSTED:
    case grpc.status.INVALID_ARGUMENT:
    case grpc.status.OUT_OF_RANGE:
      return new FencekeeperError('INVALID_ARGUMENT', detail);
    default:
      return new FencekeeperError('INTERNAL', detail);
  }
}
