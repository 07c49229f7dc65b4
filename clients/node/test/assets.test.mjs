// The package ships copies of two files of the repository; each copy must be the file itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ASSETS, packageDir, repoRoot } from '../scripts/assets.mjs';

const require = createRequire(import.meta.url);

for (const { from, to } of ASSETS) {
  test(`${to} is identical to the repository's ${from}`, () => {
    const shipped = readFileSync(path.join(packageDir, to));
    const source = readFileSync(path.join(repoRoot, from));
    assert.ok(shipped.equals(source), `${to} differs from ${from}: run \`npm run build\``);
  });
}

test('the package loads its protocol from the shipped copy, and the pg helper its migration', () => {
  const { PROTO_FILE } = require('../dist/index.js');
  const { MIGRATION_FILE } = require('../dist/pg.js');
  assert.equal(PROTO_FILE, path.join(packageDir, 'proto', 'fencing.proto'));
  assert.equal(MIGRATION_FILE, path.join(packageDir, 'sql', 'postgresql', 'V1__fencekeeper_fence.sql'));
});

test('npm pack ships the protocol, the migration, the code and the types, and nothing else', async () => {
  const { execFileSync } = await import('node:child_process');
  const listing = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: packageDir }));
  const files = listing[0].files.map((f) => f.path).sort();
  for (const wanted of ['proto/fencing.proto', 'sql/postgresql/V1__fencekeeper_fence.sql', 'dist/index.js', 'dist/index.d.ts', 'dist/pg.js', 'dist/pg.d.ts', 'package.json']) {
    assert.ok(files.includes(wanted), `${wanted} missing from the package: ${files.join(', ')}`);
  }
  assert.deepEqual(files.filter((f) => !/^(dist\/|proto\/|sql\/|package\.json$|README\.md$|LICENSE$)/.test(f)), []);
});
