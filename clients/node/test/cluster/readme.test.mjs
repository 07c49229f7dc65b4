// The package README's examples, run: the first ```js block as a program against a real cluster (its
// output must have the shape the README shows, tokens aside), and the pg line it quotes must be a line of
// examples/node-report/worker.mjs, which the node-report test runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cluster as clusterHandle, release, repoRoot } from '../support/cluster.mjs';

const packageDir = path.join(repoRoot, 'clients', 'node');
const readme = readFileSync(path.join(packageDir, 'README.md'), 'utf8');
const fences = [...readme.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1], body: m[2] }));
let cluster;

before(async () => {
  cluster = await clusterHandle();
});

after(async () => {
  await release(cluster);
});

const shape = (text) => text.trim().split('\n').map((l) => l.replace(/\d+/g, 'N'));

test('the README\'s usage example runs and prints what the README shows', { timeout: 60_000 }, () => {
  const js = fences.findIndex((f) => f.lang === 'js');
  const program = fences[js].body.replace("from '@fencekeeper/client'", `from '${path.join(packageDir, 'dist', 'index.js')}'`);
  const shown = fences[js + 1];
  assert.equal(shown.lang, 'text');
  const dir = mkdtempSync(path.join(tmpdir(), 'fencekeeper-readme-'));
  try {
    const file = path.join(dir, 'example.mjs');
    writeFileSync(file, program);
    const run = spawnSync(process.execPath, [file], {
      encoding: 'utf8',
      env: { ...process.env, FENCEKEEPER_PEERS: cluster.clientPeers.join(',') },
      timeout: 50_000,
    });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    assert.deepEqual(shape(run.stdout), shape(shown.body));
    const [held, stale] = [/holding token (\d+)/, /STALE_TOKEN: (\d+) < (\d+)/].map((p) => p.exec(run.stdout));
    assert.equal(stale[1], held[1]);
    assert.ok(BigInt(stale[2]) > BigInt(stale[1]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the pg line the README quotes is a line of the node-report worker', () => {
  const quoted = fences.filter((f) => f.lang === 'js').slice(1).map((f) => f.body.trim());
  const worker = readFileSync(path.join(repoRoot, 'examples', 'node-report', 'worker.mjs'), 'utf8');
  assert.ok(quoted.length > 0);
  for (const line of quoted) {
    assert.ok(worker.includes(line), `not in worker.mjs: ${line}`);
  }
});
