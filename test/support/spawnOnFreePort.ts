import type { ChildProcess } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { freePort, spawnRedisServer } from "../../src/demo/spawnRedisServer.js";

/** A Cluster node listens on its port and on this much above it (the cluster bus). */
export const BUS_PORT_OFFSET = 10_000;

/** How many ports a start tries before it gives up. */
const ATTEMPTS = 5;

/** Where a server's ports come from, and what they must allow. */
export interface PortChoice {
  /** The folder whose `<port>` subfolder is the server's working directory. */
  root: string;
  /** A Cluster node: its bus port (port + BUS_PORT_OFFSET) must be free too. */
  clusterBus?: boolean;
  /** Where ports come from: the kernel's (freePort), or a test's. */
  nextPort?: () => Promise<number>;
}

export interface FreePortStart extends PortChoice {
  extraArgs?: readonly string[];
}

const inUse = (error: unknown) => /Address already in use/u.test(String(error));

/**
 * Starts a server (`start`, given a port and its folder) on a free port, and on another one if
 * that port is taken by the time it binds: test files run side by side, each taking ports, and a
 * Cluster node's bus port (10000 above its own) is never what the kernel handed out: it can be
 * another file's server port or a connection's local port (a loaded suite saw "Failed listening
 * on port 44953 (cluster)"). Any other failure of `start` is thrown at once.
 */
export async function startOnFreePort<T>(
  start: (port: number, dir: string) => Promise<T>,
  options: PortChoice,
): Promise<{ port: number; server: T }> {
  const { root, clusterBus = false, nextPort = freePort } = options;
  let refused: unknown;
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const port = await nextPort();
    // redis-server refuses a Cluster node whose bus port would pass 65535.
    if (clusterBus && port + BUS_PORT_OFFSET > 65_535) continue;
    const dir = join(root, String(port));
    await mkdir(dir, { recursive: true });
    try {
      return { port, server: await start(port, dir) };
    } catch (error) {
      if (!inUse(error)) throw error;
      refused = error;
    }
  }
  throw new Error(`redis-server found no free port in ${ATTEMPTS} tries: ${String(refused)}`);
}

/** A test's redis-server (spawnRedisServer) on a free port (startOnFreePort). */
export async function spawnOnFreePort(
  options: FreePortStart,
): Promise<{ port: number; child: ChildProcess }> {
  const extraArgs = options.extraArgs ?? [];
  const spawnAt = (port: number, dir: string) => spawnRedisServer({ port, dir, extraArgs });
  const { port, server } = await startOnFreePort(spawnAt, options);
  return { port, child: server };
}
