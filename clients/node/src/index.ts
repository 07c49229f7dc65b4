/**
 * fencekeeper's Node.js client: leases with fencing tokens over the cluster's client protocol
 * (`fencing.proto`, shipped in this package), kept alive by one session stream per client.
 *
 * ```ts
 * const client = await connect({ endpoints: '10.0.0.1:7501,10.0.0.2:7501,10.0.0.3:7501' });
 * const lease = await client.acquire('daily-sales-report', { ttlMs: 30_000, waitMs: 10_000 });
 * lease.onLost(() => stopWorking());
 * await lease.write('2026-11-29', report);   // carries lease.token; refused once a newer token exists
 * await lease.release();
 * ```
 *
 * Fencing your own PostgreSQL with the same tokens: `@fencekeeper/client/pg`.
 */
export { connect, FencekeeperClient } from './client';
export { Lease, type LeaseState } from './lease';
export { Watch } from './watch';
export { FencekeeperError, type RejectionDetails } from './errors';
export { RESULT_CODES, isResultCode, isSuccess, type ResultCode } from './codes';
export { PROTO_FILE } from './wire';
export type * from './types';
