// What Maven runs for this package (clients/node/pom.xml): `unit` in the test phase, `pack` in the package
// phase (the npm tarball the distribution ships, scripts/pack.mjs), `cluster` in the integration-test phase. Each first installs the dependencies from the committed lockfiles when they are
// missing or older than the lockfile (`npm ci`, as .ci/run does); the tests compile the package when its
// sources changed (scripts/build-if-stale.mjs), so a plain `./mvnw -B verify` runs everything and
// compiles once; `-DskipTests -DskipITs` (the launcher's build) runs none of it, so starting a cluster
// never needs Node.js. `npm test` runs its five files at once (`--test-concurrency`; node's default is
// one less than the cores, one at a time on two): they mostly wait, on timers and on PostgreSQL. A file
// that hangs fails after five minutes (`--test-timeout`, per file here) instead of holding the build.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { packageDir, repoRoot } from './assets.mjs';
import { pack } from './pack.mjs';

const PROJECTS = [packageDir, path.join(repoRoot, 'examples', 'node-report')];

function run(command, args, cwd, env = {}) {
  const result = spawnSync(command, args, { cwd, stdio: 'inherit', env: { ...process.env, ...env } });
  if (result.error) {
    console.error(`${command} ${args.join(' ')}: ${result.error.message}`);
    process.exit(1);
  }
  if (result.status !== 0) {
    process.exit(result.status ?? 1);
  }
}

function installIfNeeded(dir) {
  const installed = path.join(dir, 'node_modules', '.package-lock.json');
  const lock = path.join(dir, 'package-lock.json');
  if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
    run('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], dir);
  }
}

const what = process.argv[2];
installIfNeeded(packageDir);
if (what === 'unit') {
  run('npm', ['test'], packageDir);
} else if (what === 'pack') {
  console.log(`npm package: ${path.relative(process.cwd(), pack())}`);
} else if (what === 'cluster') {
  for (const dir of PROJECTS.slice(1)) {
    installIfNeeded(dir);
  }
  // The launcher's jar was built moments ago in this Maven run: it must not rebuild it under Maven.
  run(process.execPath, ['test/cluster/run.mjs'], packageDir, { FENCEKEEPER_SKIP_BUILD: '1' });
} else {
  console.error('usage: node scripts/maven.mjs unit|pack|cluster');
  process.exit(2);
}
