/** Wire messages to the package's public types. Internal. */
import type { LeaseEvent, LeaseEventType, LeaseInfo, StoredValue } from './types';
import type { WireLeaseEvent, WireResponse } from './wire';

export function toEvent(e: WireLeaseEvent): LeaseEvent {
  const event: LeaseEvent = {
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
  return event;
}

export function toStoredValue(r: WireResponse): StoredValue {
  return {
    value: Buffer.from(r.value ?? []),
    acceptedToken: BigInt(r.acceptedToken || '0'),
    version: Number(r.version),
    writtenAtMs: Number(r.writtenAtMs),
  };
}

export function toLeaseInfo(r: WireResponse): LeaseInfo {
  return {
    status: r.code as 'FOUND' | 'NOT_FOUND',
    live: r.live,
    token: BigInt(r.token || '0'),
    currentToken: BigInt(r.currentToken || '0'),
    holderOwner: r.holderOwner,
    expiresAtMs: Number(r.expiresAtMs),
    ttlMs: Number(r.ttlMs),
  };
}

/** A position in the event order: events are numbered (log index, seq within the entry). */
export interface Position {
  index: number;
  seq: number;
}

export function isAfter(event: Position, position: Position): boolean {
  return event.index > position.index || (event.index === position.index && event.seq > position.seq);
}
