import { spawn } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/defaultConfig.js";
import { runCli } from "../support/daemonProcess.js";
import { HANG_DEADLINE_MS } from "../support/deadlines.js";
import { freePort, uniquePrefix } from "../support/redisServer.js";
import { startFakeJanitor, statusReport, type FakeJanitor } from "../support/statusFixture.js";
import { testConfig } from "../support/testConfig.js";
import { startSilentServer } from "../support/silentServer.js";
import { useConfigFiles } from "../support/useConfigFiles.js";
import { waitFor } from "../support/waitFor.js";

/**
 * `stream-janitor status` against a stand-in for a janitor's /status.json (a node:http server
 * serving a StatusReport fixture). The command never talks to Redis: the configuration names an
 * address where none listens.
 */
const configPath = useConfigFiles();
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function janitor(status: number, body: string): Promise<FakeJanitor> {
  const fake = await startFakeJanitor(() => ({ status, body }));
  cleanups.push(fake.close);
  return fake;
}

async function configFor(port: number): Promise<string> {
  const config = testConfig("redis://127.0.0.1:1", uniquePrefix("status-cmd"), [{}], {
    http: { ...defaultConfig().http, host: "127.0.0.1", port },
  });
  return configPath(config);
}

describe("stream-janitor status", () => {
  it("prints the table and exits 0 when every group is OK or UNKNOWN", async () => {
    const body = JSON.stringify(
      statusReport([{ status: "OK" }, { group: "audit", status: "UNKNOWN" }]),
    );
    const fake = await janitor(200, body);
    const result = await runCli(["status", "--config", await configFor(fake.port)]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^leader janitor-1:4242 \(fencing token 7\), redis 7\.2\.4/u);
    expect(result.stdout).toMatch(/\norders\s+audit\s+UNKNOWN\s.*\norders\s+billing\s+OK\s/u);
  });

  it("exits 1 when some group has a bad status; --json prints the body exactly as served", async () => {
    const body = `${JSON.stringify(statusReport([{ status: "OK" }, { group: "late", status: "STALL" }]), null, 2)}\n`;
    const fake = await janitor(200, body);
    const path = await configFor(fake.port);
    const table = await runCli(["status", "--config", path]);
    expect(table.code).toBe(1);
    expect(table.stdout).toMatch(/\norders\s+late\s+STALL\s/u);
    const json = await runCli(["status", "--config", path, "--json"]);
    expect(json.code).toBe(1);
    expect(json.stdout).toBe(body);
  });

  it("asks --url instead of http.host:http.port", async () => {
    const fake = await janitor(200, JSON.stringify(statusReport([{}])));
    const result = await runCli([
      "status",
      "--config",
      await configFor(await freePort()),
      "--url",
      fake.url,
    ]);
    expect(result.code).toBe(0);
    expect(fake.authorizations).toHaveLength(1);
  });

  it("exits 1 with one line naming the URL when no janitor answers", async () => {
    const port = await freePort();
    const result = await runCli(["status", "--config", await configFor(port)]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain(`http://127.0.0.1:${port}/status.json`);
    expect(result.stderr).toContain("stream-janitor run");
    expect(result.stderr).toContain("--url");
  });

  it("exits 1 naming http.auth when the janitor refuses, and on a body that is not a report", async () => {
    const refusing = await janitor(401, "unauthorized");
    const refused = await runCli(["status", "--config", await configFor(refusing.port)]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("http.auth");
    const html = await janitor(200, "<html></html>");
    const bad = await runCli(["status", "--config", await configFor(html.port), "--json"]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toContain("not a status report");
  });

  it("exits 78 on an invalid configuration, 2 on an unknown option", async () => {
    const path = await configPath({ http: { port: "not a port" } });
    const invalid = await runCli(["status", "--config", path]);
    expect(invalid.code).toBe(78);
    const usage = await runCli(["status", "--config", path, "--offline"]);
    expect(usage.code).toBe(2);
  });
  it("stops waiting on SIGINT: exit 130, saying it was interrupted", async () => {
    // Accepts the connection and never answers: the command waits on its reply.
    const silent = await startSilentServer();
    cleanups.push(silent.close);
    const { port } = silent;
    const child = spawn(process.execPath, [CLI, "status", "--config", await configFor(port)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, "exit");
    await waitFor(() => silent.connections() > 0, { what: "the command to connect" });
    const started = Date.now();
    child.kill("SIGINT");
    const [code] = (await exited) as [number | null];
    // SIGINT ended the wait (exit 130, in its words below); the deadline only fails a hang.
    expect(code).toBe(130);
    expect(Date.now() - started).toBeLessThan(HANG_DEADLINE_MS);
    expect(stderr.trim()).toBe("stream-janitor status: interrupted by SIGINT before it finished");
  });
});
