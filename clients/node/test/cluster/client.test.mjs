// The Node client against a real three-node cluster started by the project's launcher: leases kept alive
// by the session, fenced writes, waiting, loss, watch, and the cluster's refusals as typed errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { cluster as clusterHandle, release } from '../support/cluster.mjs';

const require = createRequire(import.meta.url);
const { connect, FencekeeperError } = require('../../dist/index.js');

let cluster;
const clients = [];

before(async () => {
  cluster = await clusterHandle();
});

after(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await release(cluster);
});

async function client(owner) {
  const c = await connect({ endpoints: cluster.clientPeers, owner });
  clients.push(c);
  return c;
}

const unique = (name) => `${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const rejectedWith = (code, check = () => true) => (e) => {
  assert.ok(e instanceof FencekeeperError, `expected a FencekeeperError, got ${e?.stack ?? e}`);
  assert.equal(e.code, code, e.message);
  return check(e) !== false;
};

test('acquire, fenced write, read and validate; the lease outlives its TTL through the session', { timeout: 60_000 }, async () => {
  const worker = await client('worker-a');
  const resource = unique('daily-sales-report');
  const lease = await worker.acquire(resource, { ttlMs: 2000 });
  assert.equal(typeof lease.token, 'bigint');
  assert.ok(lease.token > 0n);
  const written = await lease.write('2026-11-29', 'totals by worker-a');
  assert.equal(written.status, 'ACCEPTED');
  assert.equal(written.version, 1);
  assert.equal(written.acceptedToken, lease.token);

  await sleep(5000); // two and a half TTLs: only the session's keep-alives keep it
  assert.equal(lease.isValid(), true);
  assert.equal(await worker.validate(resource, lease.token), 'CURRENT');
  const stored = await lease.read('2026-11-29');
  assert.equal(stored.value.toString(), 'totals by worker-a');
  assert.equal(stored.acceptedToken, lease.token);
  assert.equal(await worker.read(resource, 'no-such-key'), null);
  const info = await worker.getLease(resource);
  assert.equal(info.live, true);
  assert.equal(info.token, lease.token);
  assert.equal(info.holderOwner, 'worker-a');

  assert.deepEqual(await lease.release(), { alreadyEnded: false });
  assert.equal(lease.isValid(), false);
  assert.equal(await worker.validate(resource, lease.token), 'EXPIRED');
});

test('a held resource is HELD for another client; a waiting acquire gets it when released, and the old token is stale', { timeout: 60_000 }, async () => {
  const a = await client('worker-a');
  const b = await client('worker-b');
  const resource = unique('report');
  const first = await a.acquire(resource, { ttlMs: 5000 });
  await assert.rejects(b.acquire(resource, { ttlMs: 5000 }), rejectedWith('HELD', (e) => e.holderOwner === 'worker-a'));

  const waiting = b.acquire(resource, { ttlMs: 5000, waitMs: 20_000 });
  await sleep(500);
  await first.release();
  const second = await waiting;
  assert.ok(second.token > first.token);
  await second.write('k', 'by b');
  // The released lease refuses at once; its token sent anyway is answered STALE_TOKEN, as a result.
  await assert.rejects(first.write('k', 'late by a'), rejectedWith('LEASE_LOST'));
  const late = await a.write(resource, first.token, 'k', 'late by a');
  assert.equal(late.status, 'STALE_TOKEN');
  assert.equal(late.currentToken, second.token);
  assert.equal(late.sentToken, first.token);
  assert.equal((await b.read(resource, 'k')).value.toString(), 'by b');
  await second.release();
});

test('a waiting acquire that runs out is answered with the resource\'s state', { timeout: 60_000 }, async () => {
  const a = await client('worker-a');
  const b = await client('worker-b');
  const resource = unique('held');
  const lease = await a.acquire(resource, { ttlMs: 5000 });
  const started = Date.now();
  await assert.rejects(b.acquire(resource, { ttlMs: 5000, waitMs: 800 }), (e) => ['HELD', 'WAITING'].includes(e.code));
  assert.ok(Date.now() - started >= 700, 'it waited');
  await lease.release();
});

test('a revoked lease fires onLost once, promptly; its writes are refused', { timeout: 60_000 }, async () => {
  const worker = await client('worker-a');
  const operator = await client('operator');
  const resource = unique('revoked');
  const lease = await worker.acquire(resource, { ttlMs: 30_000 });
  const lost = [];
  lease.onLost((reason) => lost.push(reason));
  const revokedAt = Date.now();
  await operator.revoke(resource, 'test');
  for (let i = 0; i < 50 && lost.length === 0; i++) {
    await sleep(100);
  }
  assert.equal(lost.length, 1, 'onLost within 5 s of the revoke');
  assert.ok(Date.now() - revokedAt < 5000);
  assert.equal(lost[0].reason, 'LEASE_LOST');
  assert.equal(lost[0].event?.type, 'REVOKED');
  assert.equal(lease.isValid(), false);
  await assert.rejects(lease.write('k', 'v'), rejectedWith('LEASE_LOST'));
  assert.equal((await worker.write(resource, lease.token, 'k', 'v')).status, 'LEASE_EXPIRED');
  await sleep(500);
  assert.equal(lost.length, 1, 'once');
  // A listener registered afterwards hears of it too.
  const late = await new Promise((resolve) => lease.onLost(resolve));
  assert.equal(late.reason, 'LEASE_LOST');
});

test('one client keeps many leases alive with one session', { timeout: 60_000 }, async () => {
  const worker = await client('worker-many');
  const prefix = unique('many');
  const leases = await Promise.all(Array.from({ length: 20 }, (_, i) => worker.acquire(`${prefix}-${i}`, { ttlMs: 3000 })));
  await sleep(7000); // more than two TTLs
  const states = await Promise.all(leases.map((l) => worker.validate(l.resource, l.token)));
  assert.deepEqual(new Set(states), new Set(['CURRENT']));
  assert.ok(leases.every((l) => l.isValid()));
  await Promise.all(leases.map((l) => l.release()));
});

test('watch follows a resource\'s events in commit order', { timeout: 60_000 }, async () => {
  const worker = await client('watched');
  const resource = unique('watched');
  const watch = worker.watch(resource);
  const seen = [];
  const reading = (async () => {
    for await (const event of watch) {
      seen.push(event);
      if (seen.length === 4) {
        break;
      }
    }
  })();
  await sleep(500);
  const one = await worker.acquire(resource, { ttlMs: 5000 });
  await one.release();
  const two = await worker.acquire(resource, { ttlMs: 5000 });
  await two.release();
  await Promise.race([reading, sleep(10_000).then(() => assert.fail(`only ${seen.length} events`))]);
  assert.deepEqual(
    seen.map((e) => [e.type, e.token]),
    [
      ['ACQUIRED', one.token],
      ['RELEASED', one.token],
      ['ACQUIRED', two.token],
      ['RELEASED', two.token],
    ],
  );
  assert.ok(seen.every((e) => e.resource === resource));
  for (let i = 1; i < seen.length; i++) {
    assert.ok(seen[i].index > seen[i - 1].index || (seen[i].index === seen[i - 1].index && seen[i].seq > seen[i - 1].seq));
  }
});

test('the cluster\'s refusals arrive as typed errors with the protocol\'s codes', { timeout: 60_000 }, async () => {
  const worker = await client('worker-a');
  await assert.rejects(worker.acquire(unique('too-long'), { ttlMs: 3 * 60 * 60 * 1000 }), rejectedWith('INVALID_ARGUMENT'));
  await assert.rejects(worker.acquire('bad\u0001name', { ttlMs: 1000 }), rejectedWith('INVALID_ARGUMENT'));
  const lease = await worker.acquire(unique('big'), { ttlMs: 5000 });
  await assert.rejects(lease.write('k', Buffer.alloc(2 * 1024 * 1024)), rejectedWith('INVALID_ARGUMENT'));
  // Past the transport's own limit too: the value limit the nodes announce is checked first.
  await assert.rejects(
    lease.write('k', Buffer.alloc(20 * 1024 * 1024)),
    rejectedWith('INVALID_ARGUMENT', (e) => /limits\.value\.max-bytes/.test(e.message)),
  );
  await assert.rejects(worker.write(lease.resource, lease.token + 1000n, 'k', 'v'), rejectedWith('UNKNOWN_TOKEN'));
  await lease.release();
  // A resource the cluster never saw: no lease (null, as read answers), a token never issued.
  const never = unique('never-acquired');
  assert.equal(await worker.getLease(never), null);
  assert.equal(await worker.validate(never, 1n), 'UNKNOWN_TOKEN');
});
