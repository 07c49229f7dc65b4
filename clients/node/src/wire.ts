/**
 * The wire: `fencing.proto` as this package ships it, loaded with @grpc/proto-loader. Messages are plain
 * objects with the protocol's field names in lowerCamelCase (as protobuf's JSON mapping spells them),
 * 64-bit integers as decimal strings, enums by name, bytes as Buffers. Internal to the package: its public
 * types are the ones in `types.ts`.
 */
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ResultCode } from './codes';

/** Where the package keeps its copy of the protocol (copied at build time, never edited). */
export const PROTO_FILE = path.join(__dirname, '..', 'proto', 'fencing.proto');

export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

export interface WireLeaseEvent {
  index: string;
  seq: number;
  type: 'TYPE_UNSPECIFIED' | 'ACQUIRED' | 'RENEWED' | 'RELEASED' | 'EXPIRED' | 'REVOKED';
  resource: string;
  token: string;
  owner: string;
  expiresAtMs: string;
  atMs: string;
  requestId: string;
  sessionId: string;
}

export interface WireListEntry {
  resource: string;
  key: string;
  token: string;
  owner: string;
  expiresAtMs: string;
  live: boolean;
  currentToken: string;
  waiters: number;
  acceptedToken: string;
  version: string;
  valueBytes: string;
  writtenAtMs: string;
}

export interface WireServerLimits {
  maxResourceBytes: number;
  maxKeyBytes: number;
  maxOwnerBytes: number;
  maxValueBytes: number;
  maxRequestsPerBatch: number;
  minTtlMs: string;
  maxTtlMs: string;
  maxMessageBytes: number;
}

export interface WireNodeInfo {
  id: string;
  address: string;
  pid: string;
  role: string;
  term: string;
  lastAppliedIndex: string;
  commitIndex: string;
  leaderId: string;
  limits: WireServerLimits | null;
  clientAddress: string;
  clusterId: string;
}

export interface WireResponse {
  code: ResultCode | 'RESULT_CODE_UNSPECIFIED';
  message: string;
  token: string;
  currentToken: string;
  holderOwner: string;
  expiresAtMs: string;
  sentToken: string;
  alreadyEnded: boolean;
  value: Buffer;
  acceptedToken: string;
  version: string;
  writtenAtMs: string;
  key: string;
  nowMs: string;
  ttlMs: string;
  live: boolean;
  position: number;
  appliedIndex: string;
  node: WireNodeInfo | null;
  events: WireLeaseEvent[];
  entries: WireListEntry[];
  more: boolean;
  leaderId: string;
  leaderAddress: string;
  renewed: number;
}

export interface WireSessionOpened {
  sessionId: string;
  appliedIndex: string;
}

export interface WireKeepAliveAnswer {
  seq: string;
  code: ResultCode | 'RESULT_CODE_UNSPECIFIED';
  renewed: number;
  appliedIndex: string;
  nowMs: string;
}

export interface WireSessionResponse {
  kind: 'opened' | 'keepAlive' | 'event' | 'error';
  opened?: WireSessionOpened;
  keepAlive?: WireKeepAliveAnswer;
  event?: WireLeaseEvent;
  error?: WireResponse;
}

// Requests: what the client sends. A field the .proto does not have would be dropped silently by the
// loader, so each is declared here and test/wire.test.mjs checks every one against fencing.proto.

export type WireConsistency = 'CONSISTENCY_LINEARIZABLE' | 'CONSISTENCY_STALE';

export interface WireAcquireRequest {
  resource: string;
  owner: string;
  ttlMs: string;
  requestId: string;
  waitMs: string;
  lockDelayMs: string;
  sessionId: string;
}

export interface WireCancelWaitRequest {
  resource: string;
  requestId: string;
}

export interface WireReleaseRequest {
  resource: string;
  token: string;
}

export interface WireRevokeRequest {
  resource: string;
  reason: string;
}

export interface WireKeyWrite {
  key: string;
  value: Buffer;
  delete: boolean;
}

export interface WireWriteRequest {
  resource: string;
  token: string;
  writes: WireKeyWrite[];
  requestId: string;
}

export interface WireReadRequest {
  resource: string;
  key: string;
  consistency?: WireConsistency;
}

export interface WireValidateRequest {
  resource: string;
  token: string;
  consistency?: WireConsistency;
}

export interface WireLeaseQuery {
  resource: string;
  consistency?: WireConsistency;
}

// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface WireNodeInfoQuery {}

export interface WireWatchRequest {
  resource: string;
  prefix: string;
  afterIndex: string;
  afterSeq: number;
}

export interface WireSessionOpen {
  sessionId: string;
  owner: string;
  afterIndex: string;
  afterSeq: number;
}

export interface WireSessionKeepAlive {
  seq: string;
}

export interface WireSessionRequest {
  open?: WireSessionOpen;
  keepAlive?: WireSessionKeepAlive;
}

/** The unary calls the client makes, by their names in the .proto, with their request messages. */
export interface WireRequests {
  Acquire: WireAcquireRequest;
  CancelWait: WireCancelWaitRequest;
  Release: WireReleaseRequest;
  Revoke: WireRevokeRequest;
  Write: WireWriteRequest;
  Read: WireReadRequest;
  Validate: WireValidateRequest;
  GetLease: WireLeaseQuery;
  NodeStatus: WireNodeInfoQuery;
}

export type UnaryMethod = keyof WireRequests;

export type UnaryStub = (
  request: WireRequests[UnaryMethod],
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: WireResponse) => void,
) => grpc.ClientUnaryCall;

/** A stub of the service on one node. */
export interface ServiceStub extends grpc.Client {
  Watch(request: WireWatchRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<WireResponse>;
  Session(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<WireSessionRequest, WireSessionResponse>;
}

type ServiceConstructor = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ChannelOptions,
) => ServiceStub;

let serviceConstructor: ServiceConstructor | undefined;

/** The generated client class of `fencekeeper.v1.Fencekeeper`, loaded once. */
export function service(): ServiceConstructor {
  if (!serviceConstructor) {
    const definition = protoLoader.loadSync(PROTO_FILE, LOADER_OPTIONS);
    const loaded = grpc.loadPackageDefinition(definition) as unknown as {
      fencekeeper: { v1: { Fencekeeper: ServiceConstructor } };
    };
    serviceConstructor = loaded.fencekeeper.v1.Fencekeeper;
  }
  return serviceConstructor;
}

/** The unary stub for `method` on `stub`. */
export function unaryStub(stub: ServiceStub, method: UnaryMethod): UnaryStub {
  const fn = (stub as unknown as Record<string, UnaryStub>)[method];
  return fn.bind(stub);
}
