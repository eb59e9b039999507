import { execFile } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../src/demo/spawnRedisServer.js";
import { portMapLaunch } from "./portMap.js";

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** A listener standing for a janitor's proxy: resolves with the first line a client sends it. */
async function proxyStandIn(): Promise<{ port: number; received: Promise<string> }> {
  const server = createServer();
  cleanup.push(() => new Promise((resolve) => server.close(() => resolve())));
  const received = once(server, "connection").then(async ([socket]: Socket[]) => {
    const [chunk] = (await once(socket as Socket, "data")) as [Buffer];
    (socket as Socket).destroy();
    return chunk.toString();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  return { port: typeof address === "object" && address !== null ? address.port : 0, received };
}

/** `node [launch args] -e <connect to port as ioredis does>`; its exit code and stderr. */
function connectFrom(nodeArgs: string[], env: Record<string, string>, port: number) {
  const script = `const net = require("node:net");
const socket = (0, net.createConnection)({ host: "127.0.0.1", port: ${port} });
socket.on("connect", () => socket.end("hello\\n"));
socket.on("error", (error) => { console.error(error.code); process.exit(1); });`;
  return new Promise<{ code: number; stderr: string }>((resolve) => {
    const args = [...nodeArgs, "-e", script];
    const options = { env: { ...process.env, ...env }, timeout: 20_000 };
    execFile(process.execPath, args, options, (error, _stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code ?? 1), stderr });
    });
  });
}

describe("the chaos janitors' port map (node --require)", () => {
  it("sends a connection to a mapped server port to the janitor's own proxy of it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sj-chaos-portmap-"));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const proxy = await proxyStandIn();
    const server = await freePort(); // the address a Sentinel names: nothing listens there
    const launch = await portMapLaunch(dir, { [server]: proxy.port });
    expect(await connectFrom([], {}, server)).toMatchObject({ code: 1, stderr: "ECONNREFUSED\n" });
    expect(await connectFrom(launch.nodeArgs, launch.env, server)).toEqual({ code: 0, stderr: "" });
    expect(await proxy.received).toBe("hello\n");
  });

  it("launches as before when nothing is mapped (standalone)", async () => {
    expect(await portMapLaunch(tmpdir(), {})).toEqual({ nodeArgs: [], env: {} });
  });
});
