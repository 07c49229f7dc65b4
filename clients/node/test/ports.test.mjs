// The test clusters' and PostgreSQL's ports come from below the ephemeral range, as the Java tests'
// LocalPorts draws them (a cluster's, through LocalPorts itself when the launcher's jar is built): a port
// there is never taken by one of the machine's outgoing connections.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BELOW_EPHEMERAL, PORTS, drawnBasePort, freeBasePort } from './support/cluster.mjs';
import { freePort } from './support/ports.mjs';

const highest = Math.max(...Object.values(PORTS)) + 2;
const inRange = (base) => base >= 10_000 && base + highest < BELOW_EPHEMERAL;

test('every port of a test cluster, drawn here, and a single free port, is below 32768', async () => {
  for (let i = 0; i < 40; i++) {
    const base = await drawnBasePort();
    assert.ok(inRange(base), `base port ${base} (highest port ${base + highest})`);
    const port = await freePort();
    assert.ok(port >= 10_000 && port < BELOW_EPHEMERAL, `port ${port}`);
  }
});

test('a cluster\'s base port, reserved through LocalPorts, is below 32768 too', async () => {
  const base = await freeBasePort();
  assert.ok(inRange(base), `base port ${base} (highest port ${base + highest})`);
});
