import { afterEach, describe, expect, it } from "vitest";
import type { InspectReport } from "../../src/operations/inspectReport.js";
import { runCli } from "../support/daemonProcess.js";
import { freePort, uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { startFakeJanitor, statusReport } from "../support/statusFixture.js";
import { useConfigFiles } from "../support/useConfigFiles.js";

/**
 * inspect's STATUS column: the verdicts of a janitor answering at the configured http address
 * (a node:http stand-in serving a StatusReport fixture until the status engine lands), or `-`
 * and one line saying why.
 */
const fixture = useRedisServer();
const configPath = useConfigFiles();
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function twoGroups(port: number) {
  const stream = `${uniquePrefix("inspect-status")}:orders`;
  await fixture.redis.xadd(stream, "*", "n", "1");
  for (const group of ["billing", "audit"])
    await fixture.redis.xgroup("CREATE", stream, group, "0");
  const path = await configPath({
    redis: { url: fixture.server.url },
    http: { host: "0.0.0.0", port },
    groups: [
      { stream, group: "billing" },
      { stream, group: "audit" },
    ],
  });
  return { stream, path };
}

describe("inspect with a janitor's statuses", () => {
  it("shows each group's status, and the reason of those not OK; --json adds status and statusReason", async () => {
    // The body is built at each request: the stream's name is known once the state is made.
    let stream = "";
    const fake = await startFakeJanitor(() => ({
      status: 200,
      body: JSON.stringify(
        statusReport([
          { stream, group: "billing", status: "STALL", reason: "lag 1 in every sample" },
          { stream, group: "audit", status: "OK", reason: "lag 0" },
        ]),
      ),
    }));
    cleanups.push(fake.close);
    const state = await twoGroups(fake.port);
    stream = state.stream;
    const { path } = state;

    const table = await runCli(["inspect", "--config", path]);
    expect(table.stderr).toBe("");
    // A bad status does not change inspect's exit code: it reports, `status` judges.
    expect(table.code).toBe(0);
    const [header = "", billing = "", audit = ""] = table.stdout.split("\n");
    expect(header).toMatch(/DEAD LETTERS\s+OLDEST DEAD\s+STATUS\s+HEADROOM\s+DUE$/u);
    const column = header.indexOf("STATUS");
    expect(billing.slice(column)).toMatch(/^STALL\s/u);
    expect(audit.slice(column)).toMatch(/^OK\s/u);
    expect(table.stdout).toContain(`status ${stream}/billing: STALL, lag 1 in every sample`);
    expect(table.stdout).not.toContain(`status ${stream}/audit`);

    const json = await runCli(["inspect", "--json", "--config", path]);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as InspectReport;
    expect(report.groups.map((g) => [g.group, g.status, g.statusReason])).toEqual([
      ["billing", "STALL", "lag 1 in every sample"],
      ["audit", "OK", "lag 0"],
    ]);
    expect(report.statusProblem).toBeUndefined();
  });

  it("shows `-` and one line naming the URL when no janitor answers", async () => {
    const port = await freePort();
    const { path } = await twoGroups(port);
    const table = await runCli(["inspect", "--config", path]);
    expect(table.stderr).toBe("");
    expect(table.code).toBe(0);
    const [header = "", billing = ""] = table.stdout.split("\n");
    expect(billing.slice(header.indexOf("STATUS"))).toMatch(/^-\s/u);
    const lines = table.stdout.split("\n").filter((line) => line.startsWith("status"));
    expect(lines).toEqual([
      expect.stringContaining(`no janitor answered at http://127.0.0.1:${port}/status.json`),
    ]);
    expect(lines[0]).toContain("stream-janitor run");

    const json = await runCli(["inspect", "--json", "--config", path]);
    const report = JSON.parse(json.stdout) as InspectReport;
    expect(report.groups.map((g) => [g.status, g.statusReason])).toEqual([
      [null, null],
      [null, null],
    ]);
    expect(report.statusProblem).toContain(`http://127.0.0.1:${port}/status.json`);
  });

  it("asks --url instead", async () => {
    const fake = await startFakeJanitor(() => ({ status: 401, body: "" }));
    cleanups.push(fake.close);
    const { path } = await twoGroups(await freePort());
    const table = await runCli(["inspect", "--config", path, "--url", fake.url]);
    expect(table.code).toBe(0);
    expect(fake.authorizations).toHaveLength(1);
    expect(table.stdout).toMatch(/\nstatus: the janitor at .* refused .*http\.auth/u);
  });
});
