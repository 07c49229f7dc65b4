import net from 'node:net';

/** Whether nothing listens on `port` on loopback (as a node's own bind would find it). */
export function isFree(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port free now, below the ephemeral range (as the cluster's ports: support/cluster.mjs). */
export async function freePort() {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * (32_768 - 10_000));
    if (await isFree(port)) {
      return port;
    }
  }
  throw new Error('no free loopback port below 32768 after 200 tries');
}

/** Polls `check` until it returns something truthy, or fails after `timeoutMs` naming `what`. */
export async function waitFor(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) {
        return value;
      }
    } catch (e) {
      last = e;
      if (e && e.fatal) {
        throw e;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last.message}` : ''}`);
}
