// The package README's examples, run as a Node team would: the npm tarball the build makes (the one the
// distribution ships) installed into a fresh project in a temp dir outside the repository, and the README's
// first ```js block run there, unchanged, against a real cluster (its output must have the shape the
// README shows, tokens aside). The pg lines it quotes must be lines of examples/node-report/worker.mjs,
// which the node-report test runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pack } from '../../scripts/pack.mjs';
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

test('the README starts with how to install the package, from the tarball and (once published) from npm', () => {
  const install = readme.indexOf('## Install');
  assert.ok(install > 0 && install < readme.indexOf('## Use'), 'an Install section before Use');
  const sh = fences.filter((f) => f.lang === 'sh').map((f) => f.body).join('\n');
  assert.match(sh, /npm install \S+\/clients\/node\/fencekeeper-client-[\d.]+\.tgz/);
  assert.match(sh, /^npm install @fencekeeper\/client$/m);
  assert.match(readme, /not published to the npm registry yet/);
});

test('the tarball installs into a fresh project outside the repository and runs the README\'s example', { timeout: 240_000 }, () => {
  const tarball = pack();
  const { version } = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
  assert.ok(readme.includes(`fencekeeper-client-${version}.tgz`), 'the README names the tarball of this version');
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'fencekeeper-consumer-')));
  assert.ok(path.relative(repoRoot, dir).startsWith('..'), `${dir} must be outside the repository`);
  try {
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
    const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 180_000,
    });
    assert.equal(install.status, 0, `npm install ${tarball}:\n${install.stdout}\n${install.stderr}`);
    const installed = path.join(dir, 'node_modules', '@fencekeeper', 'client');
    for (const file of ['dist/index.js', 'dist/index.d.ts', 'dist/pg.js', 'dist/pg.d.ts', 'proto/fencing.proto', 'sql/postgresql/V1__fencekeeper_fence.sql']) {
      assert.ok(existsSync(path.join(installed, file)), `the installed package has ${file}`);
    }
    assert.ok(!existsSync(path.join(installed, 'src')), 'no sources: nothing is compiled at install');
    // Its types serve a strict TypeScript consumer that checks libraries too (no skipLibCheck).
    writeFileSync(
      path.join(dir, 'consumer.ts'),
      [
        "import { connect, type WriteResult } from '@fencekeeper/client';",
        "import { advance, fencedTransaction } from '@fencekeeper/client/pg';",
        'export async function run(): Promise<WriteResult> {',
        "  const client = await connect({ endpoints: '127.0.0.1:7501', signal: AbortSignal.timeout(1000) });",
        "  const lease = await client.acquire('r', { ttlMs: 1000 });",
        "  await advance({ query: async () => ({ rowCount: 1, rows: [] }) }, lease);",
        "  await fencedTransaction({ query: async () => ({ rowCount: 1, rows: [] }) }, lease, async () => 1);",
        "  return lease.write('k', 'v');",
        '}',
        '',
      ].join('\n'),
    );
    const tsc = spawnSync(
      process.execPath,
      [
        path.join(packageDir, 'node_modules', 'typescript', 'bin', 'tsc'),
        '--noEmit', '--strict', '--target', 'ES2022', '--module', 'nodenext', '--moduleResolution', 'nodenext',
        '--types', 'node', '--typeRoots', path.join(packageDir, 'node_modules', '@types'), 'consumer.ts',
      ],
      { cwd: dir, encoding: 'utf8' },
    );
    assert.equal(tsc.status, 0, `tsc on a consumer of the installed package:\n${tsc.stdout}${tsc.stderr}`);

    const js = fences.findIndex((f) => f.lang === 'js');
    const shown = fences[js + 1];
    assert.equal(shown.lang, 'text');
    const file = path.join(dir, 'example.mjs');
    writeFileSync(file, fences[js].body);
    const run = spawnSync(process.execPath, [file], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, FENCEKEEPER_ENDPOINTS: cluster.clientPeers.join(',') },
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

test('the pg lines the README quotes are lines of the node-report worker', () => {
  const quoted = fences.filter((f) => f.lang === 'js').slice(1).map((f) => f.body.trim());
  const worker = readFileSync(path.join(repoRoot, 'examples', 'node-report', 'worker.mjs'), 'utf8');
  assert.ok(quoted.length >= 2);
  for (const line of quoted) {
    assert.ok(worker.includes(line), `not in worker.mjs: ${line}`);
  }
});
