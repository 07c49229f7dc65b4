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

export interface WireSessionResponse {
  kind: 'opened' | 'keepAlive' | 'event' | 'error';
  opened?: { sessionId: string; appliedIndex: string };
  keepAlive?: {
    seq: string;
    code: ResultCode | 'RESULT_CODE_UNSPECIFIED';
    renewed: number;
    appliedIndex: string;
    nowMs: string;
  };
  event?: WireLeaseEvent;
  error?: WireResponse;
}

/** The unary calls of the service, by their names in the .proto. */
export type UnaryMethod =
  | 'Acquire'
  | 'CancelWait'
  | 'Renew'
  | 'Release'
  | 'Revoke'
  | 'Write'
  | 'Read'
  | 'Validate'
  | 'GetLease'
  | 'List'
  | 'NodeStatus';

export type UnaryStub = (
  request: object,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: WireResponse) => void,
) => grpc.ClientUnaryCall;

/** A stub of the service on one node. */
export interface ServiceStub extends grpc.Client {
  Watch(request: object, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<WireResponse>;
  Session(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<object, WireSessionResponse>;
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
