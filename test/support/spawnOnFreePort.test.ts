import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../src/demo/spawnRedisServer.js";
import { BUS_PORT_OFFSET, spawnOnFreePort } from "./spawnOnFreePort.js";

const held: Server[] = [];
const started: { kill(signal: NodeJS.Signals): boolean }[] = [];
let root = "";

afterEach(async () => {
  for (const child of started.splice(0)) child.kill("SIGKILL");
  for (const server of held.splice(0)) server.close();
  if (root !== "") await rm(root, { recursive: true, force: true });
});

/** Listens on `port` (as another file's server or a connection's local port would hold it). */
async function hold(port: number): Promise<boolean> {
  const server = createServer();
  server.listen(port, "127.0.0.1");
  // once() rejects on the server's "error": the port is taken.
  const listening = await once(server, "listening").then(
    () => true,
    () => false,
  );
  if (!listening) return false;
  held.push(server);
  return true;
}

/** A free port whose bus port we now hold. */
async function portWithTakenBus(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + BUS_PORT_OFFSET <= 65_535 && (await hold(port + BUS_PORT_OFFSET))) return port;
  }
}

describe("a test's redis-server on a free port", () => {
  it("starts a Cluster node on another port when its bus port is taken", async () => {
    root = await mkdtemp(join(tmpdir(), "sj-port-"));
    const taken = await portWithTakenBus();
    const tried: number[] = [];
    const nextPort = async () => {
      const port = tried.length === 0 ? taken : await freePort();
      tried.push(port);
      return port;
    };
    const extraArgs = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"];
    const node = await spawnOnFreePort({ root, extraArgs, clusterBus: true, nextPort });
    started.push(node.child);
    expect(tried[0]).toBe(taken);
    expect(node.port).not.toBe(taken);
    expect(node.child.exitCode).toBeNull();
  }, 30_000);

  it("fails with the server's words on any other start-up error, without trying again", async () => {
    root = await mkdtemp(join(tmpdir(), "sj-port-"));
    let tries = 0;
    const nextPort = async () => {
      tries += 1;
      return freePort();
    };
    const start = spawnOnFreePort({ root, extraArgs: ["--no-such-option", "1"], nextPort });
    await expect(start).rejects.toThrow(/no-such-option/u);
    expect(tries).toBe(1);
  }, 30_000);
});
