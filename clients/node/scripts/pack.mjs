// Makes the npm package's tarball, target/fencekeeper-client-VERSION.tgz: `npm pack` of this directory
// after compiling it when its sources changed (scripts/build-if-stale.mjs). It holds the compiled
// JavaScript and type declarations (dist/), the protocol and the migration, so installing it builds
// nothing. Maven runs it in the package phase (clients/node/pom.xml) and the distribution ships the
// tarball; the install test (test/cluster/install.test.mjs) installs it into a fresh project.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIfStale } from './build-if-stale.mjs';
import { packageDir } from './assets.mjs';

export const targetDir = path.join(packageDir, 'target');

/** The tarball's path: npm's name for it (`@fencekeeper/client` 0.1.0 -> fencekeeper-client-0.1.0.tgz). */
export function tarballPath() {
  const { name, version } = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
  return path.join(targetDir, `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`);
}

/** Builds if needed and packs; resolves with the tarball's path. Exits the process when npm fails. */
export function pack() {
  buildIfStale();
  mkdirSync(targetDir, { recursive: true });
  // The build has just run (or was current): npm's own `prepack` build would only repeat it.
  const result = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', targetDir, '--loglevel=warn'], {
    cwd: packageDir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (result.error || result.status !== 0) {
    console.error(`npm pack failed: ${result.error?.message ?? `exit status ${result.status}`}`);
    process.exit(result.status || 1);
  }
  return tarballPath();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(pack());
}
