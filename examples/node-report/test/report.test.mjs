// The paused-worker scenario for real: three worker processes, a three-node cluster started by the
// project's launcher, a real PostgreSQL. The first holder is SIGSTOPped while it generates the report,
// its lease expires, another worker acquires and advances the database to its token and is itself
// SIGSTOPped before writing anything; the first is resumed, and its late transaction is refused by
// PostgreSQL (without the worker's `advance` it would commit: nothing newer has been written yet). The
// report that ends up written is a newer holder's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { cluster as clusterHandle, release } from '../../../clients/node/test/support/cluster.mjs';
import { postgres } from '../../../clients/node/test/support/postgres.mjs';

const exampleDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DAY = '2026-11-29';
const TTL_MS = 2000;

let cluster;
let server;
let admin;
let database;

before(async () => {
  [cluster, server] = await Promise.all([clusterHandle(), postgres()]);
  admin = new pg.Pool({ ...server.connectionConfig, max: 1 });
  admin.on('error', () => {});
  database = `node_report_${process.pid}`;
  await admin.query(`CREATE DATABASE ${database}`);
});

after(async () => {
  await admin?.end();
  await Promise.allSettled([release(cluster), server?.stop()]);
});

/** A worker process, with its output lines and a way to wait for one. */
function startWorker(name) {
  const child = spawn(process.execPath, ['worker.mjs', DAY], {
    cwd: exampleDir,
    env: {
      ...process.env,
      WORKER: name,
      FENCEKEEPER_ENDPOINTS: cluster.clientPeers.join(','),
      FENCEKEEPER_PEERS: '',
      DATABASE_URL: `postgres://${server.connectionConfig.user}@${server.connectionConfig.host}:${server.connectionConfig.port}/${database}`,
      LEASE_TTL_MS: String(TTL_MS),
      STEP_MS: '300',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const worker = { name, child, lines: [], stderr: '', waiters: [] };
  let partial = '';
  child.stdout.on('data', (chunk) => {
    const text = partial + chunk;
    const lines = text.split('\n');
    partial = lines.pop();
    for (const line of lines) {
      worker.lines.push(line);
      for (const w of [...worker.waiters]) {
        if (w.pattern.test(line)) {
          worker.waiters.splice(worker.waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  child.stderr.on('data', (chunk) => {
    worker.stderr += chunk;
  });
  worker.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  return worker;
}

// SIGSTOP takes effect on each thread of the process on its own: resolves once /proc shows all of them
// stopped, so that what the test observes next finds the worker frozen (at once where there is no /proc).
async function stop(worker) {
  worker.child.kill('SIGSTOP');
  const tasks = `/proc/${worker.child.pid}/task`;
  if (!existsSync('/proc/self/task')) return;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const states = readdirSync(tasks).map((t) => {
      try {
        const stat = readFileSync(`${tasks}/${t}/stat`, 'utf8');
        return stat.charAt(stat.lastIndexOf(')') + 2);
      } catch {
        return 'T'; // a thread that ended meanwhile
      }
    });
    if (states.every((c) => c === 'T' || c === 't')) return;
    if (Date.now() > deadline) throw new Error(`${worker.name} was sent SIGSTOP but its threads are ${states.join('')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function lineOf(worker, pattern) {
  const seen = worker.lines.find((l) => pattern.test(l));
  if (seen) {
    return Promise.resolve(seen);
  }
  return new Promise((resolve) => worker.waiters.push({ pattern, resolve }));
}

function within(ms, promise, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    }),
  ]);
}

test('a worker paused past its lease is refused by PostgreSQL when it resumes, before the newer holder has written', { timeout: 120_000 }, async () => {
  const workers = ['worker-a', 'worker-b', 'worker-c'].map(startWorker);
  try {
    // Whoever acquires first is paused in the middle of generating the report.
    const first = await within(
      60_000,
      Promise.race(workers.map((w) => lineOf(w, /acquired daily-sales-report token \d+/).then(() => w))),
      'a worker to acquire the lease',
    );
    await within(10_000, lineOf(first, /generating: region 2 of 5/), `${first.name} to start generating`);
    await stop(first);
    const pausedToken = BigInt(first.lines.find((l) => /acquired/.test(l)).match(/token (\d+)/)[1]);

    // Its lease expires; a waiting worker takes over with a newer token, advances the database to it,
    // and is paused at once, before it can write anything.
    const others = workers.filter((w) => w !== first);
    const second = await within(
      60_000,
      Promise.race(others.map((w) => lineOf(w, /advanced the database to token \d+/).then(() => w))),
      'another worker to acquire and advance',
    );
    await stop(second);
    const secondToken = BigInt(second.lines.find((l) => /advanced the database/.test(l)).match(/token (\d+)/)[1]);
    assert.ok(secondToken > pausedToken, `the new holder's token ${secondToken} must exceed ${pausedToken}`);
    assert.ok(!second.lines.some((l) => /wrote the report/.test(l)), `${second.name} must not have written yet`);

    // The first worker wakes up and writes as if it still held the lease: nothing newer is written yet.
    first.child.kill('SIGCONT');
    await within(30_000, first.exited, `${first.name} to finish`);
    second.child.kill('SIGCONT');
    const codes = await within(60_000, Promise.all(workers.map((w) => w.exited)), 'the workers to finish');
    const output = workers.map((w) => `${w.lines.join('\n')}\n${w.stderr}`).join('\n---\n');
    assert.deepEqual(codes, [0, 0, 0], output);

    const refusal = first.lines.find((l) => /refused by the database/.test(l));
    assert.ok(refusal, `${first.name} must be refused:\n${output}`);
    assert.match(refusal, new RegExp(`STALE_TOKEN: resource 'daily-sales-report' sent token ${pausedToken} but the database has accepted token \\d+`));
    assert.ok(!first.lines.some((l) => /wrote the report/.test(l)), output);

    const writer = workers.find((w) => w.lines.some((l) => /wrote the report/.test(l)));
    assert.ok(writer && writer !== first, `a newer holder must write the report:\n${output}`);
    const writerToken = BigInt(writer.lines.find((l) => /wrote the report/.test(l)).match(/token (\d+)/)[1]);
    assert.ok(writerToken >= secondToken, output);

    const db = new pg.Client({ ...server.connectionConfig, database });
    await db.connect();
    try {
      const report = await db.query('SELECT body, generated_by, token FROM daily_report WHERE day = $1', [DAY]);
      assert.equal(report.rows.length, 1);
      assert.equal(report.rows[0].generated_by, writer.name);
      assert.equal(BigInt(report.rows[0].token), writerToken);
      assert.match(report.rows[0].body, new RegExp(`by ${writer.name}\\)$`));
      const fence = await db.query("SELECT token FROM fencekeeper_fence WHERE resource = 'daily-sales-report'");
      assert.ok(BigInt(fence.rows[0].token) >= writerToken);
    } finally {
      await db.end();
    }
  } finally {
    for (const w of workers) {
      if (w.child.exitCode === null && w.child.signalCode === null) {
        w.child.kill('SIGCONT');
        w.child.kill('SIGKILL');
      }
    }
  }
});
