// Runs `npm run build` unless dist/ and the copied assets are what the last build here made from exactly
// the sources there are now. The tests start with it (`npm test`, `npm run test:cluster`, and so both of
// Maven's phases): an edited source is never tested through an old dist/, and one Maven run compiles
// once. Contents decide, not times: a checkout, a copy or an edit of dist/ by hand all count.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ASSETS, packageDir, repoRoot } from './assets.mjs';

/** What the last build recorded; under node_modules/, so that `npm ci` forgets it and npm never packs it. */
const STAMP = path.join(packageDir, 'node_modules', '.cache', 'fencekeeper-client-build.json');

/** What the build reads: the sources, its configuration, the compiler's version (the lockfile), the assets. */
function inputs() {
  return [
    ...filesUnder(path.join(packageDir, 'src')),
    ...['tsconfig.json', 'package.json', 'package-lock.json'].map((f) => path.join(packageDir, f)),
    ...['assets.mjs', 'copy-assets.mjs'].map((f) => path.join(packageDir, 'scripts', f)),
    ...ASSETS.map(({ from }) => path.join(repoRoot, from)),
  ];
}

/** What the build writes. */
function outputs() {
  return [...filesUnder(path.join(packageDir, 'dist')), ...ASSETS.map(({ to }) => path.join(packageDir, to))];
}

function filesUnder(dir) {
  if (!existsSync(dir)) {
    return [];
  }
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(file) : [file];
  });
}

/** One hash of the files' names and contents; a missing file counts as such. */
function digest(files) {
  const hash = createHash('sha256');
  for (const file of [...files].sort()) {
    hash.update(path.relative(repoRoot, file)).update('\0');
    hash.update(existsSync(file) ? readFileSync(file) : '\0missing\0').update('\0');
  }
  return hash.digest('hex');
}

function lastBuild() {
  try {
    return JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Builds when needed; answers whether it did. Exits the process with npm's status if the build fails. */
export function buildIfStale() {
  // Taken before the build: a source edited while it compiles makes the next call build again.
  const sources = digest(inputs());
  const last = lastBuild();
  if (last?.inputs === sources && last.outputs === digest(outputs())) {
    return false;
  }
  const result = spawnSync('npm', ['run', 'build'], { cwd: packageDir, stdio: 'inherit' });
  if (result.error || result.status !== 0) {
    console.error(`npm run build failed: ${result.error?.message ?? `exit status ${result.status}`}`);
    process.exit(result.status || 1);
  }
  mkdirSync(path.dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, `${JSON.stringify({ inputs: sources, outputs: digest(outputs()) })}\n`);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  buildIfStale();
}
