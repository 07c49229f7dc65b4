/**
 * The result codes of fencekeeper's client protocol, by the names `fencing.proto` gives them. They are
 * the same names the command line's `--json` prints as `status` and the JSON gateway answers with.
 */
export type ResultCode =
  | 'GRANTED'
  | 'RENEWED'
  | 'RELEASED'
  | 'ACCEPTED'
  | 'FOUND'
  | 'NOT_FOUND'
  | 'CURRENT'
  | 'STALE'
  | 'EXPIRED'
  | 'HELD'
  | 'LEASE_LOST'
  | 'NOT_HOLDER'
  | 'STALE_TOKEN'
  | 'LEASE_EXPIRED'
  | 'UNKNOWN_TOKEN'
  | 'INVALID_ARGUMENT'
  | 'INTERNAL'
  | 'UNAVAILABLE'
  | 'WAITING'
  | 'LOCK_DELAYED'
  | 'COMPACTED'
  | 'REVOKED'
  | 'PERMISSION_DENIED'
  | 'OVERLOADED'
  | 'BATCH_ANSWERED'
  | 'NOT_LEADER';

/** Every code, in the order of the protocol's enum. */
export const RESULT_CODES: readonly ResultCode[] = Object.freeze([
  'GRANTED',
  'RENEWED',
  'RELEASED',
  'ACCEPTED',
  'FOUND',
  'NOT_FOUND',
  'CURRENT',
  'STALE',
  'EXPIRED',
  'HELD',
  'LEASE_LOST',
  'NOT_HOLDER',
  'STALE_TOKEN',
  'LEASE_EXPIRED',
  'UNKNOWN_TOKEN',
  'INVALID_ARGUMENT',
  'INTERNAL',
  'UNAVAILABLE',
  'WAITING',
  'LOCK_DELAYED',
  'COMPACTED',
  'REVOKED',
  'PERMISSION_DENIED',
  'OVERLOADED',
  'BATCH_ANSWERED',
  'NOT_LEADER',
]);

const SUCCESS: ReadonlySet<ResultCode> = new Set<ResultCode>([
  'GRANTED',
  'RENEWED',
  'RELEASED',
  'ACCEPTED',
  'FOUND',
  'NOT_FOUND',
  'CURRENT',
  'REVOKED',
]);

/**
 * Whether a code means the call did what was asked, or a query was answered with what it found
 * (NOT_FOUND included). A validate's STALE or EXPIRED is an answer, but not a success: the token may
 * not be used. The Java client's `ResultCode.isSuccess` states the same rule.
 */
export function isSuccess(code: ResultCode): boolean {
  return SUCCESS.has(code);
}

/** Whether `text` names a result code. */
export function isResultCode(text: unknown): text is ResultCode {
  return typeof text === 'string' && (RESULT_CODES as readonly string[]).includes(text);
}
