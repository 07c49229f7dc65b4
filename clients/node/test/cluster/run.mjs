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

/** In this order: the survival tests stop and restart the cluster, so they come last. */
const FILES = [
  path.join(packageDir, 'test', 'cluster', 'client.test.mjs'),
  path.join(packageDir, 'test', 'cluster', 'readme.test.mjs'),
  path.join(packageDir, 'test', 'cluster', 'bench.test.mjs'),
  path.join(packageDir, 'test', 'cluster', 'gateway-doc.test.mjs'),
  path.join(repoRoot, 'examples', 'python', 'python.test.mjs'),
  path.join(repoRoot, 'examples', 'node-report', 'test', 'report.test.mjs'),
  path.join(packageDir, 'test', 'cluster', 'survival.test.mjs'),
];

const only = process.argv.slice(2);
const files = only.length > 0 ? FILES.filter((f) => only.some((o) => f.includes(o))) : FILES;

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
  const child = spawn(process.execPath, ['--test', '--test-concurrency=1', ...files], {
    stdio: 'inherit',
    env: {
      ...process.env,
      FENCEKEEPER_TEST_CLUSTER: cluster.state.stateFile,
      FENCEKEEPER_TEST_POSTGRES: JSON.stringify(postgres.connectionConfig),
    },
  });
  code = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
} catch (e) {
  console.error(`cluster tests could not run: ${e.stack ?? e}`);
} finally {
  await stopAll();
}
process.exit(code);
