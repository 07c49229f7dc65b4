// A scripted node for the client's own tests: the real service definition (the package's fencing.proto)
// on a loopback port, with behaviour each test sets. It grants what it is asked, records every call and
// session message, and lets a test break streams, withhold answers or send events, so the client's
// session logic can be driven into states a real cluster reaches only under faults.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { PROTO_FILE, LOADER_OPTIONS } = require('../../dist/wire.js');

let serviceDefinition;

/** The service, parsed once per process: parsing blocks the event loop, which the tests' timers share. */
function fencekeeperService() {
  serviceDefinition ??= grpc.loadPackageDefinition(protoLoader.loadSync(PROTO_FILE, LOADER_OPTIONS)).fencekeeper.v1.Fencekeeper.service;
  return serviceDefinition;
}

export class FakeNode {
  constructor() {
    this.calls = [];
    this.sessions = []; // { call, opens: [open], keepAlives: [] }
    this.nextToken = 100;
    this.appliedIndex = 50;
    this.answerKeepAlives = true;
    this.notLeader = undefined; // a client address to redirect to
    this.onOpen = undefined; // (open, session) => SessionResponse to answer with, instead of opened
    this.leases = new Map(); // resource -> token (live)
    this.renewedCount = undefined; // what keep-alive answers say they renewed (default: the live leases)
    this.silent = new Set(); // names of calls it never answers (a node that hangs)
    this.answers = {}; // name -> (request) => answer, instead of the default one
    this.limits = { maxResourceBytes: 256, maxKeyBytes: 512, maxOwnerBytes: 256, maxValueBytes: 1048576 };
  }

  /** `tls`: { key, cert, ca, requireClientCert } (PEM) for a node that speaks TLS only. */
  async start(tls) {
    this.server = new grpc.Server();
    const unary = (name, answer) => (call, callback) => {
      this.calls.push({ name, request: call.request });
      if (this.silent.has(name)) {
        return;
      }
      if (this.notLeader !== undefined) {
        callback(null, { code: 'NOT_LEADER', leaderAddress: this.notLeader });
        return;
      }
      callback(null, (this.answers[name] ?? answer)(call.request));
    };
    this.server.addService(fencekeeperService(), {
      Acquire: unary('Acquire', (r) => {
        const token = String(++this.nextToken);
        this.leases.set(r.resource, token);
        return { code: 'GRANTED', token, ttlMs: r.ttlMs, expiresAtMs: String(Date.now() + Number(r.ttlMs)), nowMs: String(Date.now()) };
      }),
      Release: unary('Release', (r) => {
        this.leases.delete(r.resource);
        return { code: 'RELEASED', token: r.token };
      }),
      GetLease: unary('GetLease', (r) => {
        const token = this.leases.get(r.resource);
        return token ? { code: 'FOUND', live: true, token, currentToken: token } : { code: 'NOT_FOUND' };
      }),
      NodeStatus: unary('NodeStatus', () => ({ code: 'FOUND', node: { id: 'n1', role: 'LEADER', limits: this.limits } })),
      Write: unary('Write', (r) => ({ code: 'ACCEPTED', version: '1', acceptedToken: r.token })),
      Read: unary('Read', () => ({ code: 'NOT_FOUND' })),
      Validate: unary('Validate', () => ({ code: 'UNKNOWN_TOKEN', message: 'token never issued' })),
      CancelWait: unary('CancelWait', () => ({ code: 'RELEASED' })),
      Watch: (call) => {
        this.calls.push({ name: 'Watch', request: call.request });
        call.on('cancelled', () => {});
      },
      Session: (call) => {
        const session = { call, opens: [], keepAlives: [] };
        this.sessions.push(session);
        call.on('data', (message) => {
          if (message.open) {
            session.opens.push(message.open);
            if (this.notLeader !== undefined) {
              call.write({ error: { code: 'NOT_LEADER', leaderAddress: this.notLeader } });
              call.end();
              return;
            }
            const instead = this.onOpen?.(message.open, session);
            if (instead) {
              call.write(instead);
              call.end();
              return;
            }
            call.write({ opened: { sessionId: message.open.sessionId, appliedIndex: String(this.appliedIndex) } });
          } else if (message.keepAlive) {
            session.keepAlives.push({ seq: message.keepAlive.seq, at: Date.now() });
            if (this.answerKeepAlives) {
              call.write({
                keepAlive: { seq: message.keepAlive.seq, code: 'RENEWED', renewed: this.renewedCount ?? this.leases.size, appliedIndex: String(++this.appliedIndex) },
              });
            }
          }
        });
        call.on('error', () => {});
        call.on('end', () => call.end());
      },
    });
    const credentials = tls
      ? grpc.ServerCredentials.createSsl(
          tls.ca ?? null,
          [{ private_key: Buffer.from(tls.key), cert_chain: Buffer.from(tls.cert) }],
          tls.requireClientCert ?? false,
        )
      : grpc.ServerCredentials.createInsecure();
    this.port = await new Promise((resolve, reject) =>
      this.server.bindAsync('127.0.0.1:0', credentials, (e, port) => (e ? reject(e) : resolve(port))),
    );
    this.address = `127.0.0.1:${this.port}`;
    return this;
  }

  /** The session stream open now (the last one opened). */
  get session() {
    return this.sessions[this.sessions.length - 1];
  }

  /** Sends a lease event on the open session stream. */
  event(type, resource, token, index, seq = 0) {
    if (type !== 'ACQUIRED' && type !== 'RENEWED') {
      this.leases.delete(resource);
    }
    this.session.call.write({ event: { index: String(index), seq, type, resource, token: String(token) } });
  }

  /** Ends the open session stream with an error, as a node that stopped leading or died would. */
  breakSession() {
    this.session.call.destroy(Object.assign(new Error('stream broken by the test'), { code: grpc.status.UNAVAILABLE }));
  }

  async stop() {
    // A graceful shutdown waits for every call to end: a client that failed to close its stream would keep
    // it waiting for ever.
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, 5000);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.server.forceShutdown();
  }
}

export const until = async (check, ms = 5000, what = 'a condition') => {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
};
