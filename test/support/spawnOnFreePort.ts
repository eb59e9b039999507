import type { ChildProcess } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { freePort, spawnRedisServer } from "../../src/demo/spawnRedisServer.js";

/** A Cluster node listens on its port and on this much above it (the cluster bus). */
export const BUS_PORT_OFFSET = 10_000;

/** How many ports a start tries before it gives up. */
const ATTEMPTS = 5;

export interface FreePortStart {
  /** The folder whose `<port>` subfolder is the server's working directory. */
  root: string;
  extraArgs?: readonly string[];
  /** A Cluster node: its bus port (port + BUS_PORT_OFFSET) must be free too. */
  clusterBus?: boolean;
  /** Where ports come from: the kernel's (freePort), or a test's. */
  nextPort?: () => Promise<number>;
}

const inUse = (error: unknown) => /Address already in use/u.test(String(error));

/**
 * Starts redis-server on a free port, and on another one if that port is taken by the time it
 * binds: test files run side by side, each taking ports, and a Cluster node's bus port (10000
 * above its own) is never what the kernel handed out: it can be another file's server port or a
 * connection's local port (a loaded suite saw "Failed listening on port 44953 (cluster)").
 */
export async function spawnOnFreePort(
  options: FreePortStart,
): Promise<{ port: number; child: ChildProcess }> {
  const { root, extraArgs = [], clusterBus = false, nextPort = freePort } = options;
  let refused: unknown;
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const port = await nextPort();
    // redis-server refuses a Cluster node whose bus port would pass 65535.
    if (clusterBus && port + BUS_PORT_OFFSET > 65_535) continue;
    const dir = join(root, String(port));
    await mkdir(dir, { recursive: true });
    try {
      return { port, child: await spawnRedisServer({ port, dir, extraArgs }) };
    } catch (error) {
      if (!inUse(error)) throw error;
      refused = error;
    }
  }
  throw new Error(`redis-server found no free port in ${ATTEMPTS} tries: ${String(refused)}`);
}
