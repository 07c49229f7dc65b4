import type { ResultCode } from './codes';
import type { WireResponse } from './wire';

/** What the cluster said alongside a rejection: whichever fields apply to the call. */
export interface RejectionDetails {
  /** The newest token issued for the resource. */
  currentToken?: bigint;
  /** The token the call sent. */
  sentToken?: bigint;
  /** Owner label of the live lease (HELD). */
  holderOwner?: string;
  /** The live lease's deadline in the cluster's time (HELD, LOCK_DELAYED: when the delay ends). */
  expiresAtMs?: number;
  /** The key that failed the check (write rejections). */
  key?: string;
  /** WAITING: the place in line, 1 = next. */
  position?: number;
}

/**
 * A call that could not do what it was asked, with the protocol's result code (`code`) and what the
 * cluster said about it. UNAVAILABLE means no node answered in time: a command may or may not have been
 * applied (a retried write with the same request id is applied at most once).
 */
export class FencekeeperError extends Error implements RejectionDetails {
  readonly code: ResultCode;
  // Declared, not defined: only the details that apply become properties, so that `console.log(err)`
  // shows what the cluster said and no field without a value.
  declare readonly currentToken?: bigint;
  declare readonly sentToken?: bigint;
  declare readonly holderOwner?: string;
  declare readonly expiresAtMs?: number;
  declare readonly key?: string;
  declare readonly position?: number;

  /** `options.cause`: what the error came from (a gRPC error, a signal's reason), as `err.cause`. */
  constructor(code: ResultCode, message: string, details: RejectionDetails = {}, options?: { cause?: unknown }) {
    super(message ? `${code}: ${message}` : code, options);
    this.code = code;
    Object.assign(this, definedOnly(details));
  }

  /** The error a rejected answer stands for. */
  static fromResponse(response: WireResponse): FencekeeperError {
    const code = response.code === 'RESULT_CODE_UNSPECIFIED' ? 'INTERNAL' : response.code;
    return new FencekeeperError(code, response.message, {
      currentToken: positiveBigInt(response.currentToken),
      sentToken: positiveBigInt(response.sentToken),
      holderOwner: response.holderOwner || undefined,
      expiresAtMs: positiveNumber(response.expiresAtMs),
      key: response.key || undefined,
      position: response.position || undefined,
    });
  }

  /** A plain object for logs and JSON: the code, the message and the details, tokens as strings. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { status: this.code, message: this.message };
    for (const field of ['currentToken', 'sentToken', 'holderOwner', 'expiresAtMs', 'key', 'position'] as const) {
      const value = this[field];
      if (value !== undefined) {
        out[field] = typeof value === 'bigint' ? value.toString() : value;
      }
    }
    return out;
  }
}

// On the prototype rather than each error: printed errors show their name once, in the stack's first line.
Object.defineProperty(FencekeeperError.prototype, 'name', { value: 'FencekeeperError', writable: true, configurable: true });

function definedOnly<T extends object>(details: T): Partial<T> {
  return Object.fromEntries(Object.entries(details).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function positiveBigInt(text: string): bigint | undefined {
  const value = BigInt(text || '0');
  return value > 0n ? value : undefined;
}

function positiveNumber(text: string): number | undefined {
  const value = Number(text || '0');
  return value > 0 ? value : undefined;
}
