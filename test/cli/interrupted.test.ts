import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { waitFor } from "../support/waitFor.js";
import { useConfigFiles } from "../support/useConfigFiles.js";
import { addDeadLetters } from "../operator/deadLetterFixtures.js";

const fixture = useRedisServer();
const cleanups: (() => Promise<void>)[] = [];
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;

afterAll(async () => {
  await Promise.all(cleanups.map((cleanup) => cleanup()));
});

const configPath = useConfigFiles();

describe("an interrupted one-shot command", () => {
  it("dlq redrive prints what it moved and exits 130 on SIGINT", async () => {
    const stream = uniquePrefix("redrive-sigint");
    const target = `${stream}:retry`;
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: `{${stream}}:dead`,
      count: 3000,
    });
    const path = await configPath({
      redis: { url: fixture.server.url },
      groups: [{ stream, group: "workers", requeueStream: target }],
    });
    const args = ["dlq", "redrive", "--config", path, "--stream", stream, "--group", "workers"];
    const child = spawn(process.execPath, [CLI, ...args, "--rate", "300", "--json"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = once(child, "exit");
    await waitFor(async () => (await fixture.redis.xlen(target)) >= 100, {
      what: "the redrive to be under way",
    });
    child.kill("SIGINT");
    const [code] = (await exited) as [number | null];
    expect(code).toBe(130);
    const summary = JSON.parse(stdout) as { redriven: number; remaining: number };
    expect(summary.redriven).toBe(await fixture.redis.xlen(target));
    expect(summary.redriven).toBeGreaterThanOrEqual(100);
    expect(summary.remaining).toBe(3000 - summary.redriven);
  });

  it("a command waiting on Redis exits 143 on SIGTERM and says it was interrupted", async () => {
    // A server that accepts connections and never answers: the command waits on its reply.
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => sockets.push(socket));
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    cleanups.push(() => {
      for (const socket of sockets) socket.destroy();
      silent.close();
      return Promise.resolve();
    });
    const address = silent.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const path = await configPath({ redis: { url: `redis://127.0.0.1:${port}` } });
    const child = spawn(
      process.execPath,
      [CLI, "dlq", "list", "--config", path, "--stream", "s", "--group", "g"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, "exit");
    await waitFor(() => sockets.length > 0, { what: "the command to connect" });
    child.kill("SIGTERM");
    const [code] = (await exited) as [number | null];
    expect(code).toBe(143);
    expect(stderr).toContain("interrupted by SIGTERM");
  });
});
