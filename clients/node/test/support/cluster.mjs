// A real three-node cluster for the Node tests, started by the project's launcher (`./fencekeeper up`) on
// free loopback ports with its own data directory, and stopped by the test.
//
// One cluster can serve several test files: `startCluster()` writes its state (ports, data directory, the
// pid of `up` and of each node) to a JSON file, and `attachCluster(file)` gives another process the same
// handle. `up` runs in a process group of its own, so a test may stop it and start it again (a cluster
// restart) and whoever stops the cluster last stops the `up` that runs then.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isFree, waitFor } from './ports.mjs';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** Offsets of a node's ports from its Raft port, as the nodes' defaults and `up` set them. */
export const PORTS = { raft: 0, metrics: 100, client: 200, http: 300 };
const READY = /cluster ready, leader (n\d+)/;
const NODE_LINE = /^(n\d+)\s+\S+\s+pid (\d+)/gm;
const START_TIMEOUT_MS = 300_000;

/**
 * Ports come from below the ephemeral range, as the Java tests' LocalPorts draws them: from 10000 up to
 * below 32768, where Linux (ip_local_port_range 32768-60999) and other systems (49152 and up) never hand
 * one to an outgoing connection, so a busy machine's own connections cannot take a node's port.
 */
export const LOWEST_PORT = 10_000;
export const BELOW_EPHEMERAL = 32_768;

/**
 * A base port for a three-node cluster, reserved for as long as this process lives: LocalPorts itself
 * picks it (support/ReservePorts.java, run with the launcher's jar), so Java tests, drills and other Node
 * runs on this machine, which pick through it too, never take the same ports; without the jar (not built
 * yet) a free base port drawn here, which only the bind check protects.
 */
export async function freeBasePort() {
  return (await reservedBasePort()) ?? drawnBasePort();
}

const LAUNCHER_JAR = path.join(repoRoot, 'tools', 'cli', 'target', 'fencekeeper.jar');

async function reservedBasePort() {
  if (!existsSync(LAUNCHER_JAR)) {
    return undefined;
  }
  const holder = spawn('java', ['-cp', LAUNCHER_JAR, path.join(path.dirname(fileURLToPath(import.meta.url)), 'ReservePorts.java')], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const port = await new Promise((resolve) => {
    let out = '';
    holder.on('error', () => resolve(undefined));
    holder.on('exit', () => resolve(undefined));
    holder.stdout.on('data', (chunk) => {
      out += chunk;
      const line = /^(\d+)\n/.exec(out);
      if (line) {
        resolve(Number(line[1]));
      }
    });
  });
  if (port === undefined) {
    return undefined;
  }
  // Held until this process ends: its end closes the holder's input, and the holder's end the locks.
  holder.stdout.destroy();
  holder.unref();
  holder.stdin.unref?.();
  holder.stdin.on('error', () => {});
  return port;
}

export async function drawnBasePort() {
  const highest = Math.max(...Object.values(PORTS)) + 2;
  for (let attempt = 0; attempt < 100; attempt++) {
    const base = LOWEST_PORT + Math.floor(Math.random() * (BELOW_EPHEMERAL - highest - LOWEST_PORT));
    let free = true;
    for (const offset of Object.values(PORTS)) {
      for (let i = 0; i < 3 && free; i++) {
        free = await isFree(base + offset + i);
      }
    }
    if (free) {
      return base;
    }
  }
  throw new Error('no free ports for a three-node cluster');
}

export class Cluster {
  constructor(state) {
    this.state = state;
  }

  get basePort() {
    return this.state.basePort;
  }

  get dataDir() {
    return this.state.dataDir;
  }

  /** The nodes' client addresses (gRPC), host:port. */
  get clientPeers() {
    return [0, 1, 2].map((i) => `127.0.0.1:${this.basePort + PORTS.client + i}`);
  }

  /** The nodes' JSON gateway base URLs. */
  get httpUrls() {
    return [0, 1, 2].map((i) => `http://127.0.0.1:${this.basePort + PORTS.http + i}`);
  }

  /** The environment the command line needs to reach this cluster. */
  get cliEnv() {
    return {
      ...process.env,
      FENCEKEEPER_BASE_PORT: String(this.basePort),
      FENCEKEEPER_DATA_DIR: this.dataDir,
      FENCEKEEPER_SKIP_BUILD: process.env.FENCEKEEPER_SKIP_BUILD ?? '',
    };
  }

  /** Pids of the running nodes, by id, as the last `up` printed them. */
  get nodePids() {
    return { ...this.state.nodes };
  }

  /** Starts `up` (again, after `stop`) and waits until it reports a leader; resolves with its id. */
  async up() {
    const log = path.join(this.state.scratch, `up-${Date.now()}.log`);
    const out = openSync(log, 'a');
    const up = spawn(path.join(repoRoot, 'fencekeeper'), ['up'], {
      cwd: this.state.scratch,
      env: this.cliEnv,
      detached: true,
      stdio: ['ignore', out, out],
    });
    closeSync(out);
    up.unref();
    this.state.upPid = up.pid;
    this.state.log = log;
    this.save();
    // Ready when `up` says so, or when a node's gateway says it leads and can answer a command.
    const leader = await waitFor(async () => {
      const text = readFileSync(log, 'utf8');
      if (!isAlive(up.pid)) {
        throw Object.assign(new Error(`fencekeeper up exited before the cluster was ready:\n${text.slice(-3000)}`), { fatal: true });
      }
      const nodes = [...text.matchAll(NODE_LINE)];
      if (nodes.length < 3) {
        return undefined;
      }
      this.state.nodes = Object.fromEntries(nodes.map((m) => [m[1], Number(m[2])]));
      return READY.exec(text)?.[1] ?? (await this.leaderViaGateway());
    }, START_TIMEOUT_MS, `\`fencekeeper up\` on base port ${this.basePort}`);
    this.save();
    // The leader can know it leads before the others have heard from it; until they have, a follower's
    // gateway answers NOT_LEADER instead of redirecting, which a doc test's curl would take as its answer.
    return waitFor(() => this.leaderKnownByAll(), START_TIMEOUT_MS, `every node of base port ${this.basePort} to know the leader`);
  }

  /** The id of the leader when every node's gateway names the same one, else undefined. */
  async leaderKnownByAll() {
    const known = await Promise.all(
      this.httpUrls.map(async (url) => {
        const status = await (await fetch(`${url}/v1/node/status`, { signal: AbortSignal.timeout(2000) })).json();
        return status.node?.leaderId;
      }),
    );
    return known[0] && known.every((id) => id === known[0]) ? known[0] : undefined;
  }

  /** The id of the node whose gateway says it leads and whose leadership answers a command. */
  async leaderViaGateway() {
    for (const url of this.httpUrls) {
      try {
        const status = await (await fetch(`${url}/v1/node/status`, { signal: AbortSignal.timeout(2000) })).json();
        if (status.node?.role === 'LEADER') {
          const probe = await fetch(`${url}/v1/leases/get`, {
            method: 'POST',
            body: '{"resource":"cluster-ready-probe"}',
            signal: AbortSignal.timeout(5000),
          });
          return probe.status === 404 || probe.status === 200 ? status.node.id : undefined;
        }
      } catch {
        // not up yet
      }
    }
    return undefined;
  }

  /** Stops `up` and every node (SIGTERM, as Ctrl-C), and waits for them. */
  async stop() {
    // Another process (a test that restarted the cluster) may have started the `up` that runs now.
    if (existsSync(this.state.stateFile)) {
      Object.assign(this.state, JSON.parse(readFileSync(this.state.stateFile, 'utf8')), {
        owned: this.state.owned,
        shared: this.state.shared,
      });
    }
    const pid = this.state.upPid;
    if (!pid || !isAlive(pid)) {
      return;
    }
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
    try {
      await waitFor(() => !isAlive(pid) && Object.values(this.state.nodes ?? {}).every((p) => !isAlive(p)), 60_000, 'up to stop');
    } catch (e) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
      for (const node of Object.values(this.state.nodes ?? {})) {
        try {
          process.kill(node, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      throw e;
    } finally {
      this.state.upPid = undefined;
      this.save();
    }
  }

  /** Kills one node with SIGKILL (`up` keeps the others serving). */
  kill(id) {
    process.kill(this.state.nodes[id], 'SIGKILL');
  }

  /** Stops the cluster and removes its data, when this handle started it. */
  async close() {
    await this.stop();
    if (this.state.owned) {
      rmSync(this.state.scratch, { recursive: true, force: true });
    }
  }

  save() {
    writeFileSync(this.state.stateFile, JSON.stringify(this.state, null, 2));
  }
}

/** A new cluster on free ports with its data under a fresh temp dir, started and ready. */
export async function startCluster() {
  const scratch = mkdtempSync(path.join(tmpdir(), 'fencekeeper-node-'));
  const cluster = new Cluster({
    owned: true,
    scratch,
    dataDir: path.join(scratch, 'data'),
    basePort: await freeBasePort(),
    stateFile: path.join(scratch, 'cluster.json'),
  });
  try {
    await cluster.up();
  } catch (e) {
    await cluster.close().catch(() => {});
    throw e;
  }
  return cluster;
}

/**
 * The cluster the shared test run started (its state file in FENCEKEEPER_TEST_CLUSTER), else a new one
 * that `close()` stops.
 */
export async function cluster() {
  const file = process.env.FENCEKEEPER_TEST_CLUSTER;
  if (file && existsSync(file)) {
    const state = JSON.parse(readFileSync(file, 'utf8'));
    return new Cluster({ ...state, owned: false, shared: true });
  }
  return startCluster();
}

/** For a shared cluster, `close()` leaves it to its owner. */
export async function release(handle) {
  if (handle && !handle.state.shared) {
    await handle.close();
  }
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}
