#!/usr/bin/env node
// W2, fenced writes, through the Node client: each worker holds a lease of its own and writes 100 bytes
// with its token (`lease.write`) in a closed loop, as the Java bench's W2 does through its Lease API. All
// workers share one client (one session, one channel per node), as a Node process would.
//
//   node bench/w2.mjs --peers 127.0.0.1:7501,127.0.0.1:7502,127.0.0.1:7503 \
//     [--workers 1,16] [--duration 10s] [--warmup 3s] [--ttl 30s] [--json FILE]
//
// Prints one line per worker count (writes/s, p50, p99, errors) and, with --json, writes the same as JSON.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { connect } = require('../dist/index.js');

function parseArgs(argv) {
  const options = { workers: [1, 16], durationMs: 10_000, warmupMs: 3_000, ttlMs: 30_000, json: undefined, peers: undefined };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[++i];
    if (value === undefined) {
      usage(`${flag} needs a value`);
    }
    switch (flag) {
      case '--peers':
        options.peers = value;
        break;
      case '--workers':
        options.workers = value.split(',').map((w) => positive(Number(w), flag));
        break;
      case '--duration':
        options.durationMs = duration(value, flag);
        break;
      case '--warmup':
        options.warmupMs = duration(value, flag, true);
        break;
      case '--ttl':
        options.ttlMs = duration(value, flag);
        break;
      case '--json':
        options.json = value;
        break;
      default:
        usage(`unknown flag ${flag}`);
    }
  }
  if (!options.peers) {
    usage('--peers is required (the nodes\' client addresses)');
  }
  return options;
}

function usage(problem) {
  console.error(`w2: ${problem}\nusage: node bench/w2.mjs --peers h:p,h:p,h:p [--workers 1,16] [--duration 10s] [--warmup 3s] [--ttl 30s] [--json FILE]`);
  process.exit(2);
}

function positive(n, flag) {
  if (!Number.isSafeInteger(n) || n <= 0) {
    usage(`${flag}: not a positive whole number`);
  }
  return n;
}

function duration(text, flag, zeroOk = false) {
  const m = /^(\d+)(ms|s|m)$/.exec(text);
  if (!m) {
    usage(`${flag}: '${text}' is not a duration like 500ms, 10s or 2m`);
  }
  const ms = Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2]];
  if (ms === 0 && !zeroOk) {
    usage(`${flag}: must be more than 0`);
  }
  return ms;
}

const VALUE = Buffer.alloc(100);

async function phase(leases, ms, latencies) {
  const until = performance.now() + ms;
  let errors = 0;
  let writes = 0;
  await Promise.all(
    leases.map(async (lease) => {
      while (performance.now() < until) {
        const started = performance.now();
        try {
          await lease.write('k', VALUE);
          writes++;
          latencies?.push(performance.now() - started);
        } catch {
          errors++;
        }
      }
    }),
  );
  return { writes, errors };
}

function percentile(sorted, p) {
  if (sorted.length === 0) {
    return NaN;
  }
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const options = parseArgs(process.argv.slice(2));
const client = await connect({ endpoints: options.peers, owner: `w2-bench-${process.pid}` });
const rows = [];
try {
  for (const workers of options.workers) {
    const run = `${process.pid}-${Date.now()}`;
    const leases = await Promise.all(
      Array.from({ length: workers }, (_, i) => client.acquire(`bench-w2-node-${run}-${i}`, { ttlMs: options.ttlMs })),
    );
    await phase(leases, options.warmupMs);
    const latencies = [];
    const started = performance.now();
    const { writes, errors } = await phase(leases, options.durationMs, latencies);
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const row = {
      workload: 'W2',
      client: 'node',
      workers,
      writesPerSecond: Math.round(writes / seconds),
      p50Ms: Number(percentile(latencies, 50).toFixed(2)),
      p99Ms: Number(percentile(latencies, 99).toFixed(2)),
      writes,
      errors,
      seconds: Number(seconds.toFixed(1)),
    };
    rows.push(row);
    console.log(
      `W2 node client, ${workers} worker(s): ${row.writesPerSecond} writes/s, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms (${writes} writes, ${errors} errors in ${row.seconds} s)`,
    );
    await Promise.all(leases.map((l) => l.release().catch(() => {})));
  }
} finally {
  await client.close();
}
if (options.json) {
  writeFileSync(options.json, JSON.stringify({ node: process.version, rows }, null, 2) + '\n');
}
