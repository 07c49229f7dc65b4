// The client's own guarantees against a scripted node (test/support/fake-node.mjs): cancellation, the
// timeouts it was given, connections refused and TLS handshakes refused in about a second, lost leases,
// errors and results as a Node program uses them, endpoints rather than Raft addresses.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { inspect } from 'node:util';
import { FakeNode, until } from './support/fake-node.mjs';
import { makeCerts } from './support/certs.mjs';
import { freePort } from './support/ports.mjs';

const require = createRequire(import.meta.url);
const { connect, FencekeeperError } = require('../dist/index.js');

/** A scripted node and a client of it, both closed when test `t` ends. */
async function setUp(t, options = {}) {
  const node = await new FakeNode().start();
  let client;
  t.after(async () => {
    await client?.close();
    await node.stop();
  });
  client = await connect({ endpoints: node.address, requestTimeoutMs: 2000, callTimeoutMs: 8000, ...options });
  return { node, client };
}

const aborted = (e) => e.name === 'AbortError';
const elapsed = async (promise) => {
  const started = Date.now();
  try {
    await promise;
    return { ms: Date.now() - started };
  } catch (error) {
    return { ms: Date.now() - started, error };
  }
};

describe('waiting', { concurrency: 3 }, () => {
  test('the configured call timeout is the one used, also below the default request timeout', async (t) => {
    const node = await new FakeNode().start();
    t.after(() => node.stop());
    node.silent.add('NodeStatus');
    // Below the default request timeout (3000 ms), which used to stretch it.
    const { ms, error } = await elapsed(connect({ endpoints: node.address, callTimeoutMs: 1000 }));
    assert.equal(error?.code, 'UNAVAILABLE');
    assert.match(error.message, /within 1000 ms/);
    assert.ok(ms >= 900 && ms < 2600, `connect gave up after ${ms} ms`);
  });

  test('a connection refused on every endpoint fails connect within about a second', async () => {
    const endpoints = [`127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`];
    const { ms, error } = await elapsed(connect({ endpoints }));
    assert.equal(error?.code, 'UNAVAILABLE');
    assert.match(error.message, /connection refused by every endpoint/);
    assert.match(error.message, /client\.port/);
    assert.equal(typeof error.cause?.code, 'number', 'the gRPC error is the cause');
    // About a second (a tenth of one on an idle machine), with room for a loaded one: waiting for a node
    // used to take the call timeout, 15 s.
    assert.ok(ms < 5000, `connect took ${ms} ms`);
  });

  test('an AbortSignal ends connect, acquire (cancelling its wait), write, read and a watch', async (t) => {
    const { node, client } = await setUp(t);
    node.silent.add('Acquire');
    node.silent.add('Write');
    node.silent.add('Read');

    const acquiring = new AbortController();
    const acquire = elapsed(client.acquire('r', { ttlMs: 5000, waitMs: 10_000, signal: acquiring.signal }));
    await until(() => node.calls.some((c) => c.name === 'Acquire'), 2000, 'the acquire to be sent');
    acquiring.abort();
    const a = await acquire;
    assert.ok(aborted(a.error), String(a.error));
    assert.ok(a.ms < 1000, `acquire ended ${a.ms} ms after`);
    await until(() => node.calls.some((c) => c.name === 'CancelWait'), 2000, 'the wait to be cancelled');

    const w = await elapsed(client.write('r', 5n, 'k', 'v', { signal: AbortSignal.timeout(200) }));
    assert.equal(w.error?.name, 'TimeoutError', 'the signal\'s own reason');
    assert.ok(w.ms < 1000, `write ended after ${w.ms} ms`);

    const r = await elapsed(client.read('r', 'k', { signal: AbortSignal.timeout(200) }));
    assert.equal(r.error?.name, 'TimeoutError');

    // Already aborted: nothing is sent.
    const before = node.calls.length;
    const done = AbortSignal.abort();
    await assert.rejects(client.write('r', 5n, 'k', 'v', { signal: done }), aborted);
    await assert.rejects(client.acquire('r', { ttlMs: 1000, signal: done }), aborted);
    assert.equal(node.calls.length, before);

    const watching = new AbortController();
    const watch = client.watch('r', { signal: watching.signal });
    const iterated = (async () => {
      for await (const event of watch) {
        assert.fail(`no event expected: ${event.type}`);
      }
    })();
    setTimeout(() => watching.abort(), 100);
    await assert.rejects(iterated, aborted);

    node.silent.add('NodeStatus');
    const c = await elapsed(connect({ endpoints: node.address, signal: AbortSignal.timeout(300) }));
    assert.equal(c.error?.name, 'TimeoutError');
    assert.ok(c.ms < 3000, `connect ended after ${c.ms} ms`);
    await assert.rejects(client.acquire('r', { ttlMs: 1000, signal: 'soon' }), (e) => e.code === 'INVALID_ARGUMENT');
  });

  test('Symbol.asyncDispose releases a lease and closes a client', async (t) => {
    const { node, client } = await setUp(t);
    const lease = await client.acquire('r', { ttlMs: 5000 });
    await lease[Symbol.asyncDispose]();
    assert.equal(lease.currentState, 'RELEASED');
    assert.ok(node.calls.some((c) => c.name === 'Release' && c.request.token === String(lease.token)));
    await client[Symbol.asyncDispose]();
    await assert.rejects(client.acquire('r', { ttlMs: 5000 }), /the client is closed/);
  });

  test('a write on a lost or released lease fails at once, sending nothing', async (t) => {
    const { node, client } = await setUp(t);
    const lease = await client.acquire('r', { ttlMs: 5000 });
    node.event('EXPIRED', 'r', lease.token, 60);
    await until(() => lease.currentState === 'LOST', 2000, 'the lease to be lost');
    node.silent.add('Write');
    const writes = node.calls.filter((c) => c.name === 'Write').length;
    const { ms, error } = await elapsed(lease.write('k', 'v'));
    assert.equal(error?.code, 'LEASE_LOST');
    assert.match(error.message, /was lost \(LEASE_LOST\); nothing was sent/);
    assert.ok(ms < 500, `${ms} ms`);
    await assert.rejects(lease.delete('k'), (e) => e.code === 'LEASE_LOST');
    const other = await client.acquire('s', { ttlMs: 5000 });
    await other.release();
    await assert.rejects(other.write('k', 'v'), (e) => e.code === 'LEASE_LOST' && /was released/.test(e.message));
    assert.equal(node.calls.filter((c) => c.name === 'Write').length, writes);
  });
});

describe('answers', { concurrency: 3 }, () => {
  test('a stale write is a result, as in Java, and every result serializes to JSON with tokens as strings', async (t) => {
    const { node, client } = await setUp(t);
    const lease = await client.acquire('r', { ttlMs: 5000 });
    const accepted = await lease.write('k', 'v');
    assert.equal(accepted.status, 'ACCEPTED');
    assert.deepEqual(JSON.parse(JSON.stringify(accepted)), {
      status: 'ACCEPTED',
      sentToken: String(lease.token),
      version: 1,
      acceptedToken: String(lease.token),
    });
    node.answers.Write = (r) => ({ code: 'STALE_TOKEN', message: 'a newer token exists', currentToken: '999', sentToken: r.token, key: 'k' });
    const stale = await lease.write('k', 'late');
    assert.equal(stale.status, 'STALE_TOKEN');
    assert.equal(stale.currentToken, 999n);
    assert.equal(stale.sentToken, lease.token);
    assert.equal(JSON.parse(JSON.stringify(stale)).currentToken, '999');
    node.answers.Write = () => ({ code: 'LEASE_EXPIRED', message: 'the lease ended' });
    assert.equal((await client.delete('r', lease.token, 'k')).status, 'LEASE_EXPIRED');
    node.answers.Write = () => ({ code: 'UNKNOWN_TOKEN', message: 'never issued' });
    await assert.rejects(client.write('r', 7n, 'k', 'v'), (e) => e.code === 'UNKNOWN_TOKEN');

    assert.deepEqual(JSON.parse(JSON.stringify(lease)).token, String(lease.token));
    const info = await client.getLease('r');
    assert.equal(JSON.parse(JSON.stringify(info)).token, String(lease.token));
    assert.ok(!inspect(info).includes('toJSON'), inspect(info));
    node.answers.Read = () => ({ code: 'FOUND', value: Buffer.from('v'), acceptedToken: '5', version: '2', writtenAtMs: '1' });
    assert.deepEqual(JSON.parse(JSON.stringify(await client.read('r', 'k'))), {
      value: Buffer.from('v').toString('base64'),
      acceptedToken: '5',
      version: 2,
      writtenAtMs: 1,
    });
  });

  test('getLease of nothing is null, as read of nothing; validate answers what the README lists', async (t) => {
    const { client } = await setUp(t);
    assert.equal(await client.getLease('nothing-here'), null);
    assert.equal(await client.read('nothing-here', 'k'), null);
    assert.equal(await client.validate('nothing-here', 1n), 'UNKNOWN_TOKEN');
  });

  test('a value over the cluster\'s limit is INVALID_ARGUMENT naming the limit, before the transport\'s', async (t) => {
    const { node, client } = await setUp(t);
    const lease = await client.acquire('r', { ttlMs: 5000 });
    const writes = node.calls.filter((c) => c.name === 'Write').length;
    await assert.rejects(
      lease.write('k', Buffer.alloc(20 * 1024 * 1024)),
      (e) => e.code === 'INVALID_ARGUMENT' && /20971520 bytes exceed the cluster's limits\.value\.max-bytes \(1048576\); nothing was sent/.test(e.message),
    );
    await assert.rejects(client.write('r', 5n, 'k'.repeat(600), 'v'), (e) => /limits\.key\.max-bytes \(512\)/.test(e.message));
    assert.equal(node.calls.filter((c) => c.name === 'Write').length, writes);
  });

  test('errors print readably and carry their cause', async () => {
    const error = await connect({ endpoints: `127.0.0.1:${await freePort()}` }).catch((e) => e);
    assert.ok(error instanceof FencekeeperError);
    const printed = inspect(error);
    assert.ok(!/undefined/.test(printed), printed);
    assert.match(printed, /code: 'UNAVAILABLE'/);
    assert.match(printed, /\[cause\]/);
    assert.deepEqual(Object.keys(error).sort(), ['code']);
  });
});

describe('endpoints', () => {
  test('a Raft member address is refused at once, naming the client port', async () => {
    const { ms, error } = await elapsed(connect({ endpoints: 'n1@127.0.0.1:7301,n2@127.0.0.1:7302' }));
    assert.equal(error?.code, 'INVALID_ARGUMENT');
    assert.match(error.message, /'n1@127\.0\.0\.1:7301' is a Raft member address; give the node's client port instead: 127\.0\.0\.1:7501/);
    assert.ok(ms < 500, `${ms} ms`);
  });

  test('FENCEKEEPER_ENDPOINTS is read; FENCEKEEPER_PEERS still works, with one deprecation warning', async (t) => {
    const node = await new FakeNode().start();
    const saved = { endpoints: process.env.FENCEKEEPER_ENDPOINTS, peers: process.env.FENCEKEEPER_PEERS };
    const warnings = [];
    const onWarning = (w) => warnings.push(w);
    process.on('warning', onWarning);
    t.after(async () => {
      process.off('warning', onWarning);
      for (const [name, value] of [['FENCEKEEPER_ENDPOINTS', saved.endpoints], ['FENCEKEEPER_PEERS', saved.peers]]) {
        if (value === undefined) {
          delete process.env[name];
        } else {
          process.env[name] = value;
        }
      }
      await node.stop();
    });
    process.env.FENCEKEEPER_ENDPOINTS = node.address;
    process.env.FENCEKEEPER_PEERS = 'n1@127.0.0.1:7301';
    const first = await connect();
    assert.deepEqual(first.endpoints, [node.address]);
    await first.close();
    delete process.env.FENCEKEEPER_ENDPOINTS;
    process.env.FENCEKEEPER_PEERS = node.address;
    const second = await connect();
    await second.close();
    await new Promise((resolve) => setImmediate(resolve));
    const deprecations = warnings.filter((w) => w.name === 'DeprecationWarning' && /FENCEKEEPER_PEERS/.test(w.message));
    assert.equal(deprecations.length, 1, 'one warning, however often it is read');
    process.env.FENCEKEEPER_PEERS = 'n1@127.0.0.1:7301';
    await assert.rejects(connect(), (e) => e.code === 'INVALID_ARGUMENT' && /FENCEKEEPER_PEERS: 'n1@127\.0\.0\.1:7301'.*127\.0\.0\.1:7501/.test(e.message));
    delete process.env.FENCEKEEPER_PEERS;
    await assert.rejects(connect(), (e) => e.code === 'INVALID_ARGUMENT' && /FENCEKEEPER_ENDPOINTS/.test(e.message));
  });

  // Guarantee: clusterIds() reports each endpoint's cluster id, says whether they form one cluster, and
  // names an endpoint that did not answer instead of failing.
  test('clusterIds tells endpoints of two clusters apart and names the one that did not answer', async (t) => {
    const nodes = await Promise.all([1, 2, 3].map(() => new FakeNode().start()));
    const clients = [];
    t.after(async () => {
      await Promise.all(clients.map((c) => c.close()));
      await Promise.all(nodes.map((n) => n.stop()));
    });
    const [a, b, c] = nodes;
    const status = (id, clusterId) => () => ({ code: 'FOUND', node: { id, role: 'FOLLOWER', clusterId, limits: a.limits } });
    a.answers.NodeStatus = status('n1', '00000000000000aa');
    b.answers.NodeStatus = status('n2', '00000000000000aa');
    c.answers.NodeStatus = status('n3', '00000000000000bb');
    const same = await connect({ endpoints: [a.address, b.address] });
    clients.push(same);
    const one = await same.clusterIds();
    assert.equal(one.oneCluster, true);
    assert.equal(one.clusterId, '00000000000000aa');
    assert.deepEqual(one.clusterIds, { [a.address]: '00000000000000aa', [b.address]: '00000000000000aa' });

    const mixed = await connect({ endpoints: [a.address, b.address, c.address] });
    clients.push(mixed);
    const two = await mixed.clusterIds();
    assert.equal(two.oneCluster, false);
    assert.equal(two.clusterId, undefined);
    assert.equal(two.clusterIds[c.address], '00000000000000bb');

    c.silent.add('NodeStatus');
    const started = Date.now();
    const silent = await mixed.clusterIds({ timeoutMs: 500 });
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
    assert.equal(silent.oneCluster, true);
    assert.deepEqual(Object.keys(silent.unanswered), [c.address]);
    assert.match(silent.unanswered[c.address], /deadline/i);
  });
});

describe('TLS refusals end the call within a second, naming the cause, nothing applied', { concurrency: 1 }, () => {
  let certs;
  let node;
  let otherHost;
  const cases = () => ({
    'an unknown CA (the node\'s certificate)': [node, { ca: certs.foreignCa, ...certs.client }, /not signed by a CA this client trusts/],
    'no client certificate': [node, { ca: certs.ca }, /requires a client certificate and this client sent none/],
    'a client certificate of a foreign CA': [node, { ca: certs.ca, ...certs.foreignClient }, /refused this client's certificate.*not issued by a CA the node trusts/],
    'an expired client certificate': [node, { ca: certs.ca, ...certs.expiredClient }, /refused this client's certificate: it has expired/],
    'a name mismatch': [otherHost, { ca: certs.ca, ...certs.client }, /does not name the host this client dialled/],
  });

  test('set up', async () => {
    certs = makeCerts();
    node = await new FakeNode().start({ ...certs.node, ca: Buffer.from(certs.ca), requireClientCert: true });
    otherHost = await new FakeNode().start({ ...certs.otherHost, ca: Buffer.from(certs.ca), requireClientCert: true });
    const client = await connect({ endpoints: node.address, tls: { ca: certs.ca, ...certs.client } });
    await client.close();
  });

  for (const name of ['an unknown CA (the node\'s certificate)', 'no client certificate', 'a client certificate of a foreign CA', 'an expired client certificate', 'a name mismatch']) {
    test(name, async () => {
      const [target, tls, reason] = cases()[name];
      const { ms, error } = await elapsed(connect({ endpoints: target.address, tls }));
      assert.equal(error?.code, 'PERMISSION_DENIED');
      assert.match(error.message, /TLS handshake with 127\.0\.0\.1:\d+ failed/);
      assert.match(error.message, reason);
      assert.match(error.message, /nothing was applied/);
      // About a second, with room for a loaded machine; retried, it used to take the call timeout (15 s).
      assert.ok(ms < 5000, `${ms} ms`);
    });
  }

  test('tear down', async () => {
    await node?.stop();
    await otherHost?.stop();
    certs?.remove();
  });
});

describe('seams', () => {
  test('a Lease depends on a narrow host, not on the client: no import cycle, nothing of it public on the client', async (t) => {
    const { readFileSync } = await import('node:fs');
    const lease = readFileSync(new URL('../src/lease.ts', import.meta.url), 'utf8');
    assert.ok(!/from '\.\/client'/.test(lease), 'lease.ts imports client.ts');
    const { client } = await setUp(t);
    for (const name of ['releaseToken', 'forget', 'host']) {
      assert.equal(typeof client[name], 'undefined', `client.${name} is reachable at run time`);
    }
  });
});
