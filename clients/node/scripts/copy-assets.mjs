// Copies the shipped files (scripts/assets.mjs) into the package before it is compiled or packed.
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { ASSETS, packageDir, repoRoot } from './assets.mjs';

for (const { from, to } of ASSETS) {
  const target = path.join(packageDir, to);
  mkdirSync(path.dirname(target), { recursive: true });
  copyFileSync(path.join(repoRoot, from), target);
}
