// Runs every test that needs a real cluster and a real PostgreSQL — the Node client's, the node-report
// example's, the Python example's and the JSON gateway reference's — against one cluster started by the
// project's launcher and one PostgreSQL, both started here and stopped at the end, whatever happened.
// `npm run test:cluster` (which compiles the package first when its sources changed); Maven runs it in the
// integration-test phase.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { buildIfStale } from '../../scripts/build-if-stale.mjs';
import { startCluster, repoRoot } from '../support/cluster.mjs';
import { startPostgres } from '../support/postgres.mjs';

const packageDir = path.join(repoRoot, 'clients', 'node');

const here = (file) => path.join(packageDir, 'test', 'cluster', file);
const example = (...file) => path.join(repoRoot, 'examples', ...file);

/**
 * The test files in lanes that run at the same time; the files of a lane run one after another, in this
 * order. The README's example, the node-report workers and the gateway page's curl session all take the
 * resource `daily-sales-report` and expect to be alone on it, so they share a lane; the other files use
 * names of their own. The gateway page comes last in its lane, away from the cluster's first seconds,
 * when on a busy machine it may still hold elections: the clients retry a NOT_LEADER, the page's curl
 * takes it for its answer.
 */
const LANES = [
  [here('readme.test.mjs'), example('node-report', 'test', 'report.test.mjs'), here('gateway-doc.test.mjs')],
  [here('client.test.mjs'), example('python', 'python.test.mjs')],
];
/**
 * Then these, one after another, with nothing beside them. The bench writes as fast as the cluster takes
 * them: on a busy two-core machine that slows the leader enough for the other files' short TTLs, and the
 * doc tests' exact answers, to fail. The survival tests stop and restart the cluster.
 */
const ALONE = [here('bench.test.mjs'), here('survival.test.mjs')];

const only = process.argv.slice(2);
const chosen = (files) => (only.length > 0 ? files.filter((f) => only.some((o) => f.includes(o))) : files);
const lanes = LANES.map(chosen).filter((files) => files.length > 0);
const alone = chosen(ALONE);

/** Each of `files` in turn, with `node --test`, its report written to `out`; resolves with an exit code. */
async function runLane(files, env, out) {
  let code = 0;
  for (const file of files) {
    code = (await runFile(file, env, out)) || code;
  }
  out.end();
  return code;
}

function runFile(file, env, out) {
  // Into a pipe, `node --test` reports TAP: on a terminal, the report and colours it would have given it.
  const terminal = process.stdout.isTTY;
  const reporter = terminal ? ['--test-reporter=spec'] : [];
  const child = spawn(process.execPath, ['--test', ...reporter, file], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: terminal ? { ...env, FORCE_COLOR: '1' } : env,
  });
  child.stdout.on('data', (chunk) => out.write(chunk));
  child.stderr.on('data', (chunk) => out.write(chunk));
  return new Promise((resolve) => {
    child.on('close', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
  });
}

/**
 * Reports of lanes that run at the same time, printed one lane after another: the first as it comes, each
 * next one held back until the lanes before it have ended.
 */
class InOrder {
  constructor() {
    this.lanes = [];
  }

  lane() {
    const lane = { held: [], ended: false };
    this.lanes.push(lane);
    return {
      write: (chunk) => {
        lane.held.push(chunk);
        this.flush();
      },
      end: () => {
        lane.ended = true;
        this.flush();
      },
    };
  }

  flush() {
    for (const lane of this.lanes) {
      for (const chunk of lane.held.splice(0)) {
        process.stdout.write(chunk);
      }
      if (!lane.ended) {
        return;
      }
    }
  }
}

buildIfStale();

let cluster;
let postgres;
let code = 1;
const stopAll = async () => {
  await Promise.allSettled([cluster?.close(), postgres?.stop()]);
};
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    stopAll().finally(() => process.exit(130));
  });
}
try {
  // Each assigned as soon as it runs, so that whichever started is stopped if the other fails.
  const started = [startCluster().then((c) => (cluster = c)), startPostgres().then((p) => (postgres = p))];
  await Promise.all(started.map((p) => p.catch((e) => e))).then((results) => {
    const failed = results.find((r) => r instanceof Error);
    if (failed) {
      throw failed;
    }
  });
  const env = {
    ...process.env,
    FENCEKEEPER_TEST_CLUSTER: cluster.state.stateFile,
    FENCEKEEPER_TEST_POSTGRES: JSON.stringify(postgres.connectionConfig),
  };
  const output = new InOrder();
  const codes = await Promise.all(lanes.map((files) => runLane(files, env, output.lane())));
  codes.push(await runLane(alone, env, output.lane()));
  code = codes.find((c) => c !== 0) ?? 0;
} catch (e) {
  console.error(`cluster tests could not run: ${e.stack ?? e}`);
} finally {
  await stopAll();
}
process.exit(code);
