/** Wire messages to the package's public types. Internal. */
import type { Jsonable, LeaseEvent, LeaseEventType, LeaseInfo, StoredValue, WriteResult } from './types';
import type { WireLeaseEvent, WireResponse } from './wire';

/** A value as JSON has it: bigints as decimal strings, bytes as base64. */
export function jsonValue(value: unknown): unknown {
  if (typeof value === 'bigint') {
    return value.toString();
  }
  if (value instanceof Uint8Array) {
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  }
  return value;
}

/**
 * `result` with a `toJSON` that `JSON.stringify` uses (tokens as strings) and that is not enumerable, so
 * that `console.log` and spreading show the fields alone.
 */
export function jsonable<T extends object>(result: T): T & Jsonable {
  Object.defineProperty(result, 'toJSON', {
    value(this: Record<string, unknown>) {
      return Object.fromEntries(Object.entries(this).map(([k, v]) => [k, jsonValue(v)]));
    },
    enumerable: false,
  });
  return result as T & Jsonable;
}

export function toWriteResult(r: WireResponse, sentToken: bigint): WriteResult {
  const result: Omit<WriteResult, 'toJSON'> = {
    status: r.code as WriteResult['status'],
    sentToken,
    version: Number(r.version || '0'),
    acceptedToken: BigInt(r.acceptedToken || '0'),
  };
  if (r.code !== 'ACCEPTED') {
    if (BigInt(r.currentToken || '0') > 0n) {
      result.currentToken = BigInt(r.currentToken);
    }
    if (r.key) {
      result.key = r.key;
    }
    if (r.message) {
      result.message = r.message;
    }
  }
  return jsonable(result);
}

export function toEvent(e: WireLeaseEvent): LeaseEvent {
  const event: Omit<LeaseEvent, 'toJSON'> = {
    index: Number(e.index),
    seq: e.seq,
    type: e.type as LeaseEventType,
    resource: e.resource,
    token: BigInt(e.token || '0'),
    owner: e.owner,
    expiresAtMs: Number(e.expiresAtMs),
    atMs: Number(e.atMs),
  };
  if (e.requestId) {
    event.requestId = e.requestId;
  }
  if (e.sessionId) {
    event.sessionId = e.sessionId;
  }
  return jsonable(event);
}

export function toStoredValue(r: WireResponse): StoredValue {
  return jsonable({
    value: Buffer.from(r.value ?? []),
    acceptedToken: BigInt(r.acceptedToken || '0'),
    version: Number(r.version),
    writtenAtMs: Number(r.writtenAtMs),
  });
}

export function toLeaseInfo(r: WireResponse): LeaseInfo {
  return jsonable({
    status: 'FOUND' as const,
    live: r.live,
    token: BigInt(r.token || '0'),
    currentToken: BigInt(r.currentToken || '0'),
    holderOwner: r.holderOwner,
    expiresAtMs: Number(r.expiresAtMs),
    ttlMs: Number(r.ttlMs),
  });
}

/** A position in the event order: events are numbered (log index, seq within the entry). */
export interface Position {
  index: number;
  seq: number;
}

export function isAfter(event: Position, position: Position): boolean {
  return event.index > position.index || (event.index === position.index && event.seq > position.seq);
}
