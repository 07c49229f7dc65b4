// Input the client can judge alone is refused before anything is sent, as INVALID_ARGUMENT.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { FencekeeperClient, connect } = require('../dist/index.js');

const invalid = (pattern) => (e) => e.name === 'FencekeeperError' && e.code === 'INVALID_ARGUMENT' && pattern.test(e.message);

test('endpoints must be host:port', async () => {
  await assert.rejects(connect({ endpoints: '' }), invalid(/endpoints/));
  await assert.rejects(connect({ endpoints: 'localhost' }), invalid(/'localhost' is not host:port/));
  await assert.rejects(connect({ endpoints: ['127.0.0.1:99999'] }), invalid(/99999/));
  await assert.rejects(connect(undefined), invalid(/connect/));
});

test('tls files must be readable, cert and key together', async () => {
  await assert.rejects(connect({ endpoints: '127.0.0.1:1', tls: { caFile: '/nonexistent/ca.crt' } }), invalid(/caFile/));
  await assert.rejects(connect({ endpoints: '127.0.0.1:1', tls: { cert: 'x' } }), invalid(/cert and key/));
});

test('acquire, write, read and watch check their arguments before sending', async () => {
  // Port 1 on loopback: nothing listens, and nothing must be tried.
  const client = new FencekeeperClient({ endpoints: '127.0.0.1:1', callTimeoutMs: 200, requestTimeoutMs: 100 });
  try {
    await assert.rejects(client.acquire('', { ttlMs: 1000 }), invalid(/resource/));
    await assert.rejects(client.acquire('r', { ttlMs: -5 }), invalid(/ttlMs: -5/));
    await assert.rejects(client.acquire('r', { ttlMs: 1.5 }), invalid(/ttlMs/));
    await assert.rejects(client.acquire('r', { ttlMs: 1000, waitMs: 'soon' }), invalid(/waitMs/));
    await assert.rejects(client.acquire('r'), invalid(/ttlMs/));
    await assert.rejects(client.write('r', 0n, 'k', 'v'), invalid(/token: 0/));
    await assert.rejects(client.write('r', 'abc', 'k', 'v'), invalid(/token/));
    await assert.rejects(client.write('r', 2n ** 64n, 'k', 'v'), invalid(/token/));
    await assert.rejects(client.write('r', 5n, 'k', 42), invalid(/value/));
    await assert.rejects(client.read('r', ''), invalid(/key/));
    await assert.rejects(client.read('r', 'k', { consistency: 'EVENTUAL' }), invalid(/consistency/));
    assert.throws(() => client.watch(''), invalid(/name/));
  } finally {
    await client.close();
  }
});

test('no node reachable is UNAVAILABLE within the call timeout, naming the endpoints', async () => {
  const started = Date.now();
  await assert.rejects(
    connect({ endpoints: '127.0.0.1:1', callTimeoutMs: 500, requestTimeoutMs: 200 }),
    (e) => e.code === 'UNAVAILABLE' && /127\.0\.0\.1:1/.test(e.message),
  );
  assert.ok(Date.now() - started < 5000);
});
