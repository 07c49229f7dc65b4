// A real PostgreSQL server for tests: the machine's own binaries (Debian's postgresql package, or the
// directory in FENCEKEEPER_PG_BIN), a fresh data directory under the temp dir, loopback only, stopped by
// the test.
import { spawn, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { freePort, waitFor } from './ports.mjs';

export function postgresBinDir() {
  const candidates = [];
  if (process.env.FENCEKEEPER_PG_BIN) {
    candidates.push(process.env.FENCEKEEPER_PG_BIN);
  }
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    for (const version of readdirSync(debian).sort((a, b) => Number(b) - Number(a))) {
      candidates.push(path.join(debian, version, 'bin'));
    }
  }
  const found = candidates.find((dir) => existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'postgres')));
  if (!found) {
    throw new Error(
      'no PostgreSQL server binaries found: install Debian\'s postgresql package (.ci/run does) or set FENCEKEEPER_PG_BIN',
    );
  }
  return found;
}

/** Starts a server; resolves with { port, url, connectionConfig, stop() }. */
export async function startPostgres() {
  const bin = postgresBinDir();
  const root = mkdtempSync(path.join(tmpdir(), 'fencekeeper-pg-'));
  const data = path.join(root, 'data');
  // PostgreSQL refuses to run as root: then its processes run as the package's `postgres` user.
  const owner = process.getuid?.() === 0 ? postgresUser() : {};
  if (owner.uid !== undefined) {
    chownSync(root, owner.uid, owner.gid);
  }
  execFileSync(
    path.join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--locale=C'],
    { stdio: ['ignore', 'ignore', 'pipe'], cwd: root, ...owner },
  );
  const port = await freePort();
  const server = spawn(
    path.join(bin, 'postgres'),
    [
      '-D', data, '-p', String(port), '-k', root, '-c', 'listen_addresses=127.0.0.1',
      '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=100',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], cwd: root, ...owner },
  );
  let log = '';
  server.stderr.on('data', (chunk) => {
    log = (log + chunk).slice(-4000);
  });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  await waitFor(async () => {
    if (server.exitCode !== null) {
      throw Object.assign(new Error(`postgres exited with ${server.exitCode}: ${log}`), { fatal: true });
    }
    return (await accepts(port)) && ready(bin, port);
  }, 60_000, 'PostgreSQL to accept connections');
  const connectionConfig = { host: '127.0.0.1', port, user: 'postgres', database: 'postgres' };
  return {
    port,
    connectionConfig,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      if (server.exitCode === null) {
        server.kill('SIGINT'); // fast shutdown
        const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** pg_isready: the server accepts connections (not only the socket: it has finished starting up). */
function ready(bin, port) {
  return new Promise((resolve) => {
    const probe = spawn(path.join(bin, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    probe.on('exit', (code) => resolve(code === 0));
    probe.on('error', () => resolve(false));
  });
}

function postgresUser() {
  try {
    return {
      uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
      gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
    };
  } catch {
    throw new Error('running as root, and there is no `postgres` user to run PostgreSQL as (Debian\'s postgresql package makes one)');
  }
}

function accepts(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/**
 * The PostgreSQL the shared test run started (its connection settings in FENCEKEEPER_TEST_POSTGRES), else
 * a new one; `stop()` stops only one this call started.
 */
export async function postgres() {
  const shared = process.env.FENCEKEEPER_TEST_POSTGRES;
  if (shared) {
    const connectionConfig = JSON.parse(shared);
    return {
      port: connectionConfig.port,
      connectionConfig,
      url: `postgres://${connectionConfig.user}@${connectionConfig.host}:${connectionConfig.port}/${connectionConfig.database}`,
      async stop() {},
    };
  }
  return startPostgres();
}
