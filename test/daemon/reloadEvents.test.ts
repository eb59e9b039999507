import { writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { DaemonProcess, writeConfigFile } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

const fixture = useRedisServer();
const running: DaemonProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((daemon) => daemon.kill()));
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function eventTypes(key: string): Promise<{ type: string; detail: string; by: string }[]> {
  const entries = await fixture.redis.xrange(key, "-", "+");
  return entries.map(([, fields]) => {
    const at = (name: string): string => fields[fields.indexOf(name) + 1] ?? "";
    return { type: at("type"), detail: at("detail"), by: at("by") };
  });
}

describe("advisory events of a reload", () => {
  it("writes config-reload-failed with the problems, then config-reloaded, from the leader", async () => {
    const prefix = uniquePrefix("reload-events");
    const config = testConfig(fixture.server.url, prefix, [{}]);
    const file = await writeConfigFile(config);
    cleanups.push(file.remove);
    const daemon = await DaemonProcess.start(file.path);
    running.push(daemon);
    await waitFor(() => daemon.isLeader(), { what: "the daemon to lead" });
    const key = config.events.stream;
    const has = (type: string) => async () =>
      (await eventTypes(key)).some((event) => event.type === type);
    await waitFor(has("lease-acquired"), { what: "lease-acquired" });

    await writeFile(file.path, JSON.stringify({ ...config, sweep: { intervalMs: "soon" } }));
    daemon.signal("SIGHUP");
    await waitFor(has("config-reload-failed"), { what: "config-reload-failed" });
    const failed = (await eventTypes(key)).find(({ type }) => type === "config-reload-failed");
    const problems = (JSON.parse(failed?.detail ?? "{}") as { problems?: string[] }).problems;
    expect(problems?.join("\n")).toContain("sweep.intervalMs");

    await writeFile(file.path, JSON.stringify(config));
    daemon.signal("SIGHUP");
    await waitFor(has("config-reloaded"), { what: "config-reloaded" });
    const reloaded = (await eventTypes(key)).find(({ type }) => type === "config-reloaded");
    expect(JSON.parse(reloaded?.detail ?? "{}")).toMatchObject({ groups: 1 });
    expect(reloaded?.by).toMatch(/:\d+$/u);
  });
});
