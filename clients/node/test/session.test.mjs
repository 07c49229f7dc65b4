// The client's session logic against a scripted node (test/support/fake-node.mjs): keep-alives, re-opening
// a broken stream from the last event seen, loss reported once, the local deadline, redirects.
//
// Two tests run at a time: each has its own scripted node and client and spends most of its time waiting
// on the client's timers (a third of a TTL, a local deadline), so one after another they would only add
// up those waits. Not all at once: they share one event loop, and on a busy machine a late timer makes
// the client's 500 ms request timeout run out while connecting.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { FakeNode, until } from './support/fake-node.mjs';

const require = createRequire(import.meta.url);
const { connect } = require('../dist/index.js');

/** A scripted node and a client of it, both closed when test `t` ends. */
async function setUp(t, options = {}) {
  const node = await new FakeNode().start();
  let client;
  t.after(async () => {
    await client?.close();
    await node.stop();
  });
  client = await connect({ endpoints: node.address, requestTimeoutMs: 500, callTimeoutMs: 10_000, ...options });
  return { node, client };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the session', { concurrency: 2 }, () => {
  test('a lease is acquired with the session id and kept alive by keep-alives every third of its TTL', async (t) => {
    const { node, client } = await setUp(t);
    const lease = await client.acquire('r', { ttlMs: 600 });
    const acquire = node.calls.find((c) => c.name === 'Acquire').request;
    assert.equal(acquire.sessionId, client.sessionId);
    assert.match(client.sessionId, /^[A-Za-z0-9_-]{16,64}$/);
    await sleep(1500);
    assert.equal(lease.isValid(), true);
    assert.ok(node.session.keepAlives.length >= 4, `${node.session.keepAlives.length} keep-alives in 1.5 s`);
    assert.equal(node.sessions.length, 1, 'one stream for the client');
  });

  test('an end event fires onLost once; later events of the lease change nothing', async (t) => {
    const { node, client } = await setUp(t);
    const lease = await client.acquire('r', { ttlMs: 5000 });
    const lost = [];
    lease.onLost((reason) => lost.push(reason));
    node.event('REVOKED', 'r', lease.token, 60);
    await until(() => lost.length === 1, 2000, 'onLost');
    node.event('EXPIRED', 'r', lease.token, 61);
    await sleep(200);
    assert.equal(lost.length, 1);
    assert.equal(lost[0].reason, 'LEASE_LOST');
    assert.equal(lost[0].event.type, 'REVOKED');
    assert.equal(lease.isValid(), false);
    // A release after loss does not go to the cluster.
    assert.deepEqual(await lease.release(), { alreadyEnded: true });
    assert.equal(node.calls.filter((c) => c.name === 'Release').length, 0);
  });

  test('a broken stream is re-opened with the same id after the last event seen, and renews at once', async (t) => {
    const { node, client } = await setUp(t);
    const lease = await client.acquire('r', { ttlMs: 3000 });
    node.event('ACQUIRED', 'other', 999, 70, 2);
    await sleep(100);
    node.breakSession();
    await until(() => node.sessions.length === 2 && node.session.opens.length === 1, 3000, 'a re-open');
    const reopen = node.session.opens[0];
    assert.equal(reopen.sessionId, client.sessionId);
    assert.equal(reopen.afterIndex, '70');
    assert.equal(reopen.afterSeq, 2);
    await until(() => node.session.keepAlives.length >= 1, 1000, 'a keep-alive on the new stream');
    assert.equal(lease.isValid(), true);
  });

  test('a first open asks for new events only, and a re-open before any event resumes after the opening point', async (t) => {
    const { node, client } = await setUp(t);
    await client.acquire('r', { ttlMs: 3000 });
    assert.equal(node.sessions[0].opens[0].afterIndex, '0');
    node.breakSession();
    await until(() => node.sessions.length === 2 && node.session.opens.length === 1, 3000, 'a re-open');
    assert.equal(node.session.opens[0].afterIndex, '50');
    assert.equal(node.session.opens[0].afterSeq, 2147483647);
  });

  test('a keep-alive that renewed fewer leases than the client holds makes it check each one', async (t) => {
    const { node, client } = await setUp(t);
    const kept = await client.acquire('kept', { ttlMs: 1500 });
    const gone = await client.acquire('gone', { ttlMs: 1500 });
    const lost = [];
    gone.onLost((r) => lost.push(r));
    node.leases.delete('gone'); // ended, and its event never reached the stream
    await until(() => lost.length === 1, 3000, 'the gone lease to be reported');
    assert.equal(lost[0].code, 'NOT_FOUND');
    assert.equal(kept.isValid(), true);
  });

  test('keep-alives left unanswered count as a broken stream', async (t) => {
    const { node, client } = await setUp(t);
    await client.acquire('r', { ttlMs: 1500 });
    node.answerKeepAlives = false;
    await until(() => node.sessions.length >= 2, 3000, 'a re-open after unanswered keep-alives');
    node.answerKeepAlives = true;
  });

  test('no renewal before the local deadline: DEADLINE_PASSED once, and the lease is released when the node answers again', async (t) => {
    const { node, client } = await setUp(t);
    const lease = await client.acquire('r', { ttlMs: 800 });
    const lost = [];
    lease.onLost((reason) => lost.push(reason));
    node.answerKeepAlives = false;
    await until(() => lost.length === 1, 3000, 'onLost');
    assert.equal(lost[0].reason, 'DEADLINE_PASSED');
    assert.equal(lease.isValid(), false);
    await until(() => node.calls.some((c) => c.name === 'Release' && c.request.token === String(lease.token)), 3000, 'the release');
    await sleep(300);
    assert.equal(lost.length, 1);
  });

  test('after COMPACTED the client re-opens from now and checks each lease; a lease the node no longer has is lost', async (t) => {
    const { node, client } = await setUp(t);
    const kept = await client.acquire('kept', { ttlMs: 5000 });
    const gone = await client.acquire('gone', { ttlMs: 5000 });
    const lost = { kept: [], gone: [] };
    kept.onLost((r) => lost.kept.push(r));
    gone.onLost((r) => lost.gone.push(r));
    node.event('ACQUIRED', 'x', 1, 80);
    await sleep(100);
    let refused = false;
    node.onOpen = (open) => {
      if (!refused && open.afterIndex === '80') {
        refused = true;
        return { error: { code: 'COMPACTED', message: 'events after 80 are gone' } };
      }
      return undefined;
    };
    node.leases.delete('gone'); // ended while the stream was down, its event no longer kept
    node.renewedCount = 2; // so that only COMPACTED, not a short renewal count, can reveal it
    node.breakSession();
    await until(() => lost.gone.length === 1, 5000, 'the gone lease to be reported');
    assert.equal(lost.gone[0].reason, 'LEASE_LOST');
    assert.equal(lost.gone[0].code, 'NOT_FOUND');
    await until(() => node.session.opens.some((o) => o.afterIndex === '0'), 3000, 'a re-open from now');
    assert.deepEqual(lost.kept, []);
    assert.equal(kept.isValid(), true);
  });

  test('NOT_LEADER on a session open sends the client to the named leader', async (t) => {
    const leader = await new FakeNode().start();
    const follower = await new FakeNode().start();
    let client;
    t.after(async () => {
      await client?.close();
      await Promise.all([leader.stop(), follower.stop()]);
    });
    follower.notLeader = leader.address;
    client = await connect({ endpoints: [follower.address, leader.address], requestTimeoutMs: 500, callTimeoutMs: 10_000 });
    const lease = await client.acquire('r', { ttlMs: 3000 });
    assert.equal(leader.sessions.length, 1);
    assert.ok(leader.calls.some((c) => c.name === 'Acquire'));
    assert.equal(follower.calls.filter((c) => c.name === 'Acquire').length, 0);
    assert.equal(lease.isValid(), true);
  });
});
