// The W2 bench script runs end to end against a real cluster and reports a row per worker count.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cluster as clusterHandle, release, repoRoot } from '../support/cluster.mjs';

let cluster;

before(async () => {
  cluster = await clusterHandle();
});

after(async () => {
  await release(cluster);
});

test('bench/w2.mjs measures fenced writes at 1 and 2 workers', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fencekeeper-w2-'));
  try {
    const json = path.join(dir, 'w2.json');
    const run = spawnSync(
      process.execPath,
      ['bench/w2.mjs', '--peers', cluster.clientPeers.join(','), '--workers', '1,2', '--duration', '1s', '--warmup', '0s', '--json', json],
      { cwd: path.join(repoRoot, 'clients', 'node'), encoding: 'utf8', timeout: 50_000 },
    );
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    const { rows } = JSON.parse(readFileSync(json, 'utf8'));
    assert.deepEqual(rows.map((r) => r.workers), [1, 2]);
    for (const row of rows) {
      assert.ok(row.writes > 0 && row.writesPerSecond > 0, JSON.stringify(row));
      assert.ok(row.errors < row.writes, `mostly errors: ${JSON.stringify(row)}`);
      assert.ok(row.p50Ms > 0 && row.p99Ms >= row.p50Ms);
    }
    assert.match(run.stdout, /W2 node client, 1 worker\(s\): \d+ writes\/s, p50 [\d.]+ ms, p99 [\d.]+ ms/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
