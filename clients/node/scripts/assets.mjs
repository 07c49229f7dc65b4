// The files this package ships from elsewhere in the repository, copied at build time so that there is
// one source of each: the client protocol and the guard-row migration fencekeeper-jdbc ships.
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const repoRoot = path.resolve(packageDir, '..', '..');

export const ASSETS = [
  {
    from: 'client/src/main/proto/fencing.proto',
    to: 'proto/fencing.proto',
  },
  {
    from: 'integrations/jdbc/src/main/resources/db/fencekeeper/postgresql/V1__fencekeeper_fence.sql',
    to: 'sql/postgresql/V1__fencekeeper_fence.sql',
  },
];
