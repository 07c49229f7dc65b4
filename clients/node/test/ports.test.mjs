// The test clusters' and PostgreSQL's ports come from below the ephemeral range, as the Java tests'
// LocalPorts draws them: a port there is never taken by one of the machine's outgoing connections.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BELOW_EPHEMERAL, PORTS, freeBasePort } from './support/cluster.mjs';
import { freePort } from './support/ports.mjs';

test('every port of a test cluster, and a single free port, is below 32768', async () => {
  const highest = Math.max(...Object.values(PORTS)) + 2;
  for (let i = 0; i < 40; i++) {
    const base = await freeBasePort();
    assert.ok(base >= 10_000 && base + highest < BELOW_EPHEMERAL, `base port ${base} (highest port ${base + highest})`);
    const port = await freePort();
    assert.ok(port >= 10_000 && port < BELOW_EPHEMERAL, `port ${port}`);
  }
});
