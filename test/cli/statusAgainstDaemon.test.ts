import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import type { StatusReport } from "../../src/core/groupStatus.js";
import { startDaemon, type RunningDaemon } from "../../src/daemon/startDaemon.js";
import type { InspectReport } from "../../src/operations/inspectReport.js";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { freePort, uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

/**
 * `stream-janitor status` and inspect's STATUS column against a real daemon on a real Redis,
 * behind http.auth: the commands find the daemon from the same configuration file and send its
 * token.
 */
const fixture = useRedisServer();
const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe("status and inspect ask the running janitor", () => {
  it("print the daemon's verdicts (a STOP and an OK), exit 1 on the bad one, and --json is /status.json", async () => {
    const prefix = uniquePrefix("status-cli");
    const stopped = `${prefix}:stopped`;
    const quiet = `${prefix}:quiet`;
    // Work waits on `stopped` and nobody reads it: STOP. `quiet` has nothing to do: OK.
    await fixture.redis.xgroup("CREATE", stopped, "workers", "0", "MKSTREAM");
    for (let i = 0; i < 3; i += 1) await fixture.redis.xadd(stopped, "*", "n", String(i));
    await fixture.redis.xgroup("CREATE", quiet, "workers", "$", "MKSTREAM");

    const dir = await mkdtemp(join(tmpdir(), "sj-status-cli-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const tokenFile = join(dir, "token");
    await writeFile(tokenFile, "s3cret-token\n");
    const base = testConfig(fixture.server.url, prefix, [{ stream: stopped }, { stream: quiet }], {
      status: { intervalMs: 50, window: 3, stuckAfterMs: 0 },
    });
    const config = {
      ...base,
      http: {
        ...base.http,
        port: await freePort(),
        auth: { bearerTokenFile: tokenFile, basicAuthFile: "" },
      },
    };
    const daemon: RunningDaemon = await startDaemon(config, {
      logger: pino({ level: "silent" }),
      version: "0.0.0-status-cli",
      onFatal: () => undefined,
    });
    cleanups.push(() => daemon.stop());
    const file = await writeConfigFile(config);
    cleanups.push(file.remove);

    const token = { authorization: "Bearer s3cret-token" };
    const served = await waitFor(
      async () => {
        const response = await fetch(`${daemon.httpUrl}/status.json`, { headers: token });
        const body = (await response.json()) as StatusReport;
        const statuses = body.groups.map((group) => group.status).sort();
        return statuses.join() === "OK,STOP" ? body : undefined;
      },
      { what: "the daemon judging both groups" },
    );
    expect((await fetch(`${daemon.httpUrl}/status.json`)).status).toBe(401);

    const table = await runCli(["status", "--config", file.path]);
    expect(table.stderr).toBe("");
    expect(table.code).toBe(1);
    const rows = table.stdout.split("\n");
    const stopRow = rows.findIndex((row) => row.startsWith(stopped));
    const okRow = rows.findIndex((row) => row.startsWith(quiet));
    // The bad status first, with its reason.
    expect(stopRow).toBeGreaterThan(0);
    expect(okRow).toBeGreaterThan(stopRow);
    expect(rows[stopRow]).toMatch(/^\S+\s+workers\s+STOP\s/u);
    expect(rows[stopRow]).toContain(served.groups.find((g) => g.stream === stopped)?.reason);
    expect(rows[okRow]).toMatch(/^\S+\s+workers\s+OK\s/u);

    const json = await runCli(["status", "--json", "--config", file.path]);
    expect(json.code).toBe(1);
    const body = JSON.parse(json.stdout) as StatusReport;
    expect(Object.keys(body)).toEqual(Object.keys(served));
    expect(body.groups.map((g) => [g.stream, g.group, g.status])).toEqual(
      served.groups.map((g) => [g.stream, g.group, g.status]),
    );

    const inspect = await runCli(["inspect", "--json", "--config", file.path]);
    expect(inspect.code).toBe(0);
    const report = JSON.parse(inspect.stdout) as InspectReport;
    expect(report.statusProblem).toBeUndefined();
    expect(report.groups.map((g) => [g.stream, g.status])).toEqual([
      [stopped, "STOP"],
      [quiet, "OK"],
    ]);
  });
});
