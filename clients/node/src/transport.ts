/**
 * The nodes of one cluster and how a call reaches the right one: a channel per client address, the
 * leader as the last NOT_LEADER answer named it, and retries through elections and dead nodes until the
 * call's time is up. Internal to the package.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import * as tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { FencekeeperError } from './errors';
import type { TlsOptions } from './types';
import { service, unaryStub, type ServiceStub, type UnaryMethod, type WireRequests, type WireResponse } from './wire';

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
  /** Per attempt (default the request timeout); a waiting acquire's attempt lasts its wait and more. */
  attemptTimeoutMs?: number;
  /** The call in all (default the call timeout). No attempt outlasts it. */
  callTimeoutMs?: number;
  /** Sent to any node rather than the leader (stale queries): still follows NOT_LEADER. */
  anyNode?: boolean;
  /** Ends the call: it rejects with the signal's reason, and an attempt in flight is cancelled. */
  signal?: AbortSignal;
  /**
   * Give up as soon as every endpoint refused the connection (nothing listens there): connecting, where
   * a wrong address is the likely cause, rather than a cluster restarting under a running client.
   */
  failWhenAllRefuse?: boolean;
}

/** What an aborted call rejects with: the signal's reason, as `fetch` and `timers/promises` do. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Settles as `promise` does, or rejects with the signal's reason once `signal` aborts first. */
export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) {
    return promise;
  }
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** The cause in a grpc-js connection failure's details, without its wrapping and time stamp. */
function gist(details: string): string {
  const m = /Last error: ([\s\S]*?)\s*(?:\(\d{4}-\d\d-\d\dT[^)]*\))?\.?\s*(?:Resolution note:[\s\S]*)?$/.exec(details);
  return (m ? m[1] : details).replace(/^Error(?: \[[A-Z_]+\])?: /, '').trim();
}

/** The error of a refused TLS handshake: final, nothing reached a node. */
export function tlsError(address: string, reason: string, cause: unknown): FencekeeperError {
  const error = new FencekeeperError(
    'PERMISSION_DENIED',
    `TLS handshake with ${address} failed: ${reason}; the call reached no node, nothing was applied`,
    {},
    { cause },
  );
  FINAL.add(error);
  return error;
}

const FINAL = new WeakSet<object>();

/** Whether retrying cannot change `error` (a refused TLS handshake). */
export function isFinal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && FINAL.has(error);
}

/** Rejects at once when `signal` is already aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw abortReason(signal);
  }
}

/** Checks an AbortSignal option: an object with `aborted` and `addEventListener`, or nothing. */
export function checkSignal(signal: unknown): AbortSignal | undefined {
  if (signal === undefined) {
    return undefined;
  }
  if (!(signal instanceof AbortSignal)) {
    throw new FencekeeperError('INVALID_ARGUMENT', 'signal: must be an AbortSignal');
  }
  return signal;
}

/**
 * Why a handshake failed, in the words an operator acts on, when a gRPC error's details are a TLS
 * failure; undefined otherwise. A refused handshake is final: no attempt reached fencekeeper, and
 * another attempt with the same certificates is refused the same way.
 */
export function tlsFailure(text: string): string | undefined {
  const details = gist(text);
  const m = details.toLowerCase();
  if (m.includes('certificate required') || m.includes('certificate_required')) {
    return `the node requires a client certificate and this client sent none (${details})`;
  }
  if (m.includes('certificate expired') || m.includes('certificate has expired')) {
    return m.includes('alert')
      ? `the node refused this client's certificate: it has expired (${details})`
      : `the node's certificate has expired (${details})`;
  }
  if (m.includes("does not match certificate's altnames") || m.includes('err_tls_cert_altname_invalid')) {
    return `the node's certificate does not name the host this client dialled (name mismatch: ${details})`;
  }
  if (
    m.includes('unable to verify the first certificate') ||
    m.includes('self-signed certificate') ||
    m.includes('self signed certificate') ||
    m.includes('unable to get local issuer certificate') ||
    m.includes('unable to get issuer certificate')
  ) {
    return `the node's certificate is not signed by a CA this client trusts (unknown CA: ${details})`;
  }
  if (m.includes('alert unknown ca') || m.includes('alert bad certificate') || m.includes('alert certificate unknown')) {
    return `the node refused this client's certificate: not issued by a CA it trusts, or expired (${details})`;
  }
  if (m.includes('alert internal error') || m.includes('alert handshake failure')) {
    return `the node refused this client's certificate or could not verify it (${details})`;
  }
  if (m.includes('ssl routines') || m.includes('wrong version number') || m.includes('tls handshake')) {
    return details;
  }
  return undefined;
}

/** The default distance of a node's client port from its Raft port (`client.port`, docs/configuration.md). */
export const CLIENT_PORT_OFFSET = 200;

/**
 * The client endpoints, `host:port` of the nodes' client ports, as an array or a comma-separated string.
 * A Raft member address (`n1@host:port`, what a node's `peers` setting lists) is refused at once with
 * the client port to use instead: dialled, a Raft port would never answer the client protocol.
 */
export function parseEndpoints(endpoints: string[] | string | undefined, what = 'endpoints'): string[] {
  const list = (Array.isArray(endpoints) ? endpoints : String(endpoints ?? '').split(','))
    .map((p) => String(p).trim())
    .filter((p) => p.length > 0);
  if (list.length === 0) {
    throw new FencekeeperError('INVALID_ARGUMENT', `${what}: name at least one node's client port as host:port`);
  }
  for (const endpoint of list) {
    const member = /^[^@,\s]+@(.+):(\d{1,5})$/.exec(endpoint);
    if (member) {
      const clientPort = Number(member[2]) + CLIENT_PORT_OFFSET;
      throw new FencekeeperError(
        'INVALID_ARGUMENT',
        `${what}: '${endpoint}' is a Raft member address; give the node's client port instead: ` +
          `${member[1]}:${clientPort} (client.port, by default the Raft port + ${CLIENT_PORT_OFFSET})`,
      );
    }
    if (!/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(endpoint) || Number(endpoint.split(':').pop()) > 65535) {
      throw new FencekeeperError('INVALID_ARGUMENT', `${what}: '${endpoint}' is not host:port`);
    }
  }
  return [...new Set(list)];
}

/** The PEM contents of the TLS options, read once. */
export interface TlsMaterial {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

export function credentials(tls: TlsOptions | undefined): grpc.ChannelCredentials {
  const material = tlsMaterial(tls);
  if (!material) {
    return grpc.credentials.createInsecure();
  }
  return grpc.credentials.createSsl(material.ca ?? null, material.key ?? null, material.cert ?? null);
}

export function tlsMaterial(tls: TlsOptions | undefined): TlsMaterial | undefined {
  if (!tls) {
    return undefined;
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
  return { ca, cert, key };
}

/**
 * Why `address` refuses this client's TLS handshake, or undefined when it does not (or cannot be
 * reached). gRPC reports a node that ends the connection right after the handshake only as "Failed to
 * connect": with TLS 1.3 the node judges the client's certificate after the client has finished its
 * part, and may close without an alert. This one handshake of its own, with the same certificates,
 * tells a refusal (an alert, or the connection closed before the node says anything) from a node that
 * is down (refused or no connection) or answers (its HTTP/2 settings arrive).
 */
export function probeTls(address: string, material: TlsMaterial, timeoutMs = 1000): Promise<string | undefined> {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(at + 1));
  return new Promise((resolve) => {
    let handshaken = false;
    let settled = false;
    const socket = tls.connect({
      host,
      port,
      ca: material.ca,
      cert: material.cert,
      key: material.key,
      ALPNProtocols: ['h2'],
      servername: isIP(host) ? undefined : host,
    });
    const done = (reason: string | undefined): void => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        resolve(reason);
      }
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.on('secureConnect', () => {
      handshaken = true;
      // The HTTP/2 preface: a node that accepted the certificate answers it with its settings.
      socket.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
    });
    socket.on('data', () => done(undefined));
    socket.on('error', (e: NodeJS.ErrnoException) => {
      const known = tlsFailure(e.message);
      done(known ?? (handshaken ? refusedCertificate(material) : undefined));
    });
    socket.on('close', () => done(handshaken ? refusedCertificate(material) : undefined));
  });
}

/** What a node that closed the connection right after the handshake refused, judged from this side. */
function refusedCertificate(material: TlsMaterial): string {
  if (!material.cert) {
    return 'the node ended the connection after the handshake: it requires a client certificate and this client sent none';
  }
  let certificate: X509Certificate | undefined;
  try {
    certificate = new X509Certificate(material.cert);
  } catch {
    certificate = undefined;
  }
  const now = Date.now();
  if (certificate && Date.parse(certificate.validTo) < now) {
    return `the node refused this client's certificate: it has expired (valid until ${certificate.validTo})`;
  }
  if (certificate && Date.parse(certificate.validFrom) > now) {
    return `the node refused this client's certificate: it is not valid yet (valid from ${certificate.validFrom})`;
  }
  return (
    "the node refused this client's certificate (it ended the connection right after the handshake): " +
    `not issued by a CA the node trusts${certificate ? ` (issuer: ${certificate.issuer.replace(/\n/g, ', ')})` : ''}`
  );
}

/** A pause inside a call someone awaits: it keeps the process alive, as the call does; `signal` ends it. */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** A pause of the client's own background work (re-opening the session): it keeps no process alive. */
export const backgroundSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms).unref());

export class Nodes {
  private readonly stubs = new Map<string, ServiceStub>();
  private leader: string | undefined;
  private next = 0;
  private closed = false;

  private readonly creds: grpc.ChannelCredentials;

  constructor(
    readonly peers: readonly string[],
    /** The TLS certificates, when the cluster speaks TLS. */
    readonly tls: TlsMaterial | undefined,
    readonly requestTimeoutMs: number,
    readonly callTimeoutMs: number,
  ) {
    this.creds = tls
      ? grpc.credentials.createSsl(tls.ca ?? null, tls.key ?? null, tls.cert ?? null)
      : grpc.credentials.createInsecure();
  }

  /**
   * The refused TLS handshake `details` (a gRPC error's) stand for, as a final error; undefined when
   * they are not one. Asks the node itself (probeTls) when gRPC could only say it failed to connect.
   */
  async tlsRefusal(address: string, details: string, cause: unknown): Promise<FencekeeperError | undefined> {
    const known = tlsFailure(details);
    if (known !== undefined) {
      return tlsError(address, known, cause);
    }
    if (this.tls && /Failed to connect/i.test(details)) {
      const probed = await probeTls(address, this.tls);
      if (probed !== undefined) {
        return tlsError(address, probed, cause);
      }
    }
    return undefined;
  }

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
   * Sends one request (or the request `request()` makes for each attempt) until a node that may answer
   * it does (the leader, or any node for `anyNode`), or the call's time is up (then UNAVAILABLE). Every
   * answer that reached fencekeeper, rejections included, is returned as it is; only NOT_LEADER is
   * followed. A refused TLS handshake ends the call at once.
   */
  async call<M extends UnaryMethod>(
    method: M,
    request: WireRequests[M] | (() => WireRequests[M]),
    options: CallOptions = {},
  ): Promise<WireResponse> {
    const { signal } = options;
    throwIfAborted(signal);
    const callTimeout = options.callTimeoutMs ?? this.callTimeoutMs;
    const attemptTimeout = options.attemptTimeoutMs ?? this.requestTimeoutMs;
    const deadline = Date.now() + callTimeout;
    const refused = new Set<string>();
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
        const response = await this.once(address, method, body, Math.max(Math.min(attemptTimeout, left), 1), signal);
        refused.delete(address);
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
        throwIfAborted(signal);
        const error = e as grpc.ServiceError;
        if (typeof error.code !== 'number') {
          throw e;
        }
        const details = error.details || grpc.status[error.code];
        const refusal = error.code === grpc.status.UNAVAILABLE ? await this.tlsRefusal(address, details, error) : undefined;
        if (refusal) {
          throw refusal;
        }
        if (!RETRYABLE.has(error.code)) {
          throw transportError(error, address);
        }
        this.failed(address);
        lastProblem = `${address}: ${details}`;
        if (/ECONNREFUSED/.test(details)) {
          refused.add(address);
          if (options.failWhenAllRefuse && this.peers.every((p) => refused.has(p))) {
            throw new FencekeeperError(
              'UNAVAILABLE',
              `nothing listens at ${this.peers.join(',')} (connection refused by every endpoint): are these ` +
                `the nodes' client ports (client.port, by default the Raft port + ${CLIENT_PORT_OFFSET})?`,
              {},
              { cause: error },
            );
          }
        } else {
          refused.delete(address);
        }
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
        await sleep(pause, signal);
      }
    }
  }

  /** Asks the node at `address` alone, one attempt: its answer, or the gRPC error. */
  ask<M extends UnaryMethod>(
    address: string,
    method: M,
    request: WireRequests[M],
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<WireResponse> {
    return this.once(address, method, request, timeoutMs, signal);
  }

  private once<M extends UnaryMethod>(
    address: string,
    method: M,
    request: WireRequests[M],
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<WireResponse> {
    const stub = unaryStub(this.stub(address), method);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => call.cancel();
      const call = stub(request, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (error, response) => {
        signal?.removeEventListener('abort', onAbort);
        if (error) {
          reject(error);
        } else {
          resolve(response as WireResponse);
        }
      });
      signal?.addEventListener('abort', onAbort, { once: true });
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
  const cause = { cause: error };
  switch (error.code) {
    case grpc.status.PERMISSION_DENIED:
    case grpc.status.UNAUTHENTICATED:
      return new FencekeeperError('PERMISSION_DENIED', detail, {}, cause);
    case grpc.status.RESOURCE_EXHAUSTED:
    case grpc.status.INVALID_ARGUMENT:
    case grpc.status.OUT_OF_RANGE:
      return new FencekeeperError('INVALID_ARGUMENT', detail, {}, cause);
    default:
      return new FencekeeperError('INTERNAL', detail, {}, cause);
  }
}
