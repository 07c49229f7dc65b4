// Runs the Python example's own unittest (Python's standard library only) against the JSON gateway of a
// real cluster started by the project's launcher.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cluster as clusterHandle, release } from '../../clients/node/test/support/cluster.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
let cluster;

before(async () => {
  cluster = await clusterHandle();
});

after(async () => {
  await release(cluster);
});

test('report.py: python3 -m unittest test_report', { timeout: 60_000 }, () => {
  const run = spawnSync('python3', ['-m', 'unittest', '-v', 'test_report'], {
    cwd: here,
    env: { ...process.env, FENCEKEEPER_HTTP_URLS: cluster.httpUrls.join(','), PYTHONDONTWRITEBYTECODE: '1' },
    encoding: 'utf8',
    timeout: 55_000,
  });
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  assert.match(run.stderr, /Ran 1 test/);
});
