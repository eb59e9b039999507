import { spawn } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

const fixture = useRedisServer();
const cleanups: (() => Promise<void>)[] = [];
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function configFor(prefix: string): Promise<{ path: string; key: string }> {
  const config = testConfig(fixture.server.url, prefix, [{}]);
  const file = await writeConfigFile(config);
  cleanups.push(file.remove);
  return { path: file.path, key: config.events.stream };
}

async function addEvent(key: string, fields: Record<string, string>): Promise<void> {
  const all = { by: "h:1", stream: "", group: "", count: "0", ids: "", detail: "{}", ...fields };
  await fixture.redis.xadd(key, "*", ...Object.entries(all).flat());
}

describe("stream-janitor events", () => {
  it("prints events as JSON lines or human lines, filtered by type, stream, group and since", async () => {
    const prefix = uniquePrefix("events-cmd");
    const { path, key } = await configFor(prefix);
    const now = Date.now();
    await addEvent(key, { type: "requeued", at: String(now - 7_200_000), stream: "orders" });
    await addEvent(key, {
      type: "ghosts",
      at: String(now),
      stream: "orders",
      group: "billing",
      count: "2",
      ids: "1-1 1-2",
      detail: '{"x":1}',
    });
    await addEvent(key, { type: "requeued", at: String(now), stream: "payments", group: "ledger" });

    const all = await runCli(["events", "--config", path, "--json"]);
    expect(all.code).toBe(0);
    const lines = all.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => line.type)).toEqual(["requeued", "ghosts", "requeued"]);
    expect(lines[1]).toMatchObject({
      type: "ghosts",
      at: now,
      by: "h:1",
      stream: "orders",
      group: "billing",
      count: 2,
      ids: ["1-1", "1-2"],
      detail: { x: 1 },
    });

    const typed = await runCli(["events", "-c", path, "--json", "--type", "requeued"]);
    expect(typed.stdout.trim().split("\n")).toHaveLength(2);
    const byStream = await runCli(["events", "-c", path, "--json", "--stream", "orders"]);
    expect(byStream.stdout.trim().split("\n")).toHaveLength(2);
    const byGroup = await runCli(["events", "-c", path, "--json", "--group", "ledger"]);
    expect(byGroup.stdout.trim().split("\n")).toHaveLength(1);
    const recent = await runCli(["events", "-c", path, "--json", "--since", "1h"]);
    expect(recent.stdout.trim().split("\n")).toHaveLength(2);

    const human = await runCli(["events", "-c", path, "--type", "ghosts"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("ghosts");
    expect(human.stdout).toContain("orders/billing");
    expect(human.stdout).toContain("1-1 1-2");
    expect(human.stdout).toContain(new Date(now).toISOString());

    const bad = await runCli(["events", "-c", path, "--since", "soon"]);
    expect(bad.code).toBe(2);
  });

  it("--follow prints new events as they come and stops on SIGINT with 130", async () => {
    const prefix = uniquePrefix("events-follow");
    const { path, key } = await configFor(prefix);
    await addEvent(key, { type: "requeued", at: "1" });
    const child = spawn(process.execPath, [CLI, "events", "-c", path, "--follow", "--json"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = once(child, "exit");
    // Only new events: added until one arrives (the reader may start after the first XADD).
    await waitFor(
      async () => {
        await addEvent(key, { type: "lease-acquired", at: String(Date.now()) });
        return stdout.includes("lease-acquired");
      },
      { what: "a followed event" },
    );
    expect(stdout).not.toContain('"requeued"');
    child.kill("SIGINT");
    const [code] = (await exited) as [number | null];
    expect(code).toBe(130);
  });
});
