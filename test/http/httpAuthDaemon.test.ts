import { rm, writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir, type TempDir } from "../config/configFiles.js";
import { DaemonProcess, runCli, type LogLine } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { useConfigFiles } from "../support/useConfigFiles.js";
import { waitFor } from "../support/waitFor.js";

const fixture = useRedisServer();
const configPath = useConfigFiles();
let dir: TempDir;
beforeAll(async () => {
  dir = await makeTempDir();
});
afterAll(() => dir.remove());

describe("http.auth configuration errors", () => {
  it("check-config and run exit 78 naming the key", async () => {
    const missing = `${dir.path}/no-such-token`;
    const users = await dir.write("users", "prometheus:pw\n");
    const cases: [unknown, string][] = [
      [{ http: { auth: { bearerTokenFile: missing } } }, "http.auth.bearerTokenFile"],
      [{ http: { auth: { bearerTokenFile: users, basicAuthFile: users } } }, "set at most one"],
      [{ http: { auth: { basicAuthFile: await dir.write("bad", "nocolon\n") } } }, "line 1"],
    ];
    for (const [config, text] of cases) {
      const result = await runCli(["check-config", "--config", await configPath(config)]);
      expect(result.code).toBe(78);
      expect(result.stderr).toContain(text);
    }
    const run = await runCli(["run", "--config", await configPath(cases[0]?.[0])]);
    expect(run.code).toBe(78);
    expect(run.stderr).toContain("http.auth.bearerTokenFile");
  });
});

describe("a daemon with http.auth", () => {
  let daemon: DaemonProcess;
  let tokenFile: string;
  beforeAll(async () => {
    tokenFile = await dir.write("token", "first-t0ken\n");
    const prefix = uniquePrefix("http-auth");
    const base = testConfig(fixture.server.url, prefix, [{}]);
    const config = {
      ...base,
      http: { ...base.http, auth: { ...base.http.auth, bearerTokenFile: tokenFile } },
    };
    daemon = await DaemonProcess.start(await configPath(config));
  });
  afterAll(() => daemon.kill());

  const status = async (path: string, token?: string): Promise<number> => {
    const headers: Record<string, string> =
      token === undefined ? {} : { authorization: `Bearer ${token}` };
    return (await fetch(`${daemon.httpUrl}${path}`, { headers })).status;
  };

  it("serves /metrics to the token only; /livez and /readyz stay open", async () => {
    expect(await status("/livez")).toBe(200);
    await waitFor(async () => (await status("/readyz")) === 200, { what: "readiness" });
    expect(await status("/metrics")).toBe(401);
    expect(await status("/metrics", "wrong")).toBe(401);
    expect(await status("/no-such-path")).toBe(401);
    expect(await status("/metrics", "first-t0ken")).toBe(200);
    const text = await (
      await fetch(`${daemon.httpUrl}/metrics`, { headers: { authorization: "Bearer first-t0ken" } })
    ).text();
    expect(text).toContain("stream_janitor_http_unauthorized_total 3");
    const refused = await daemon.waitForLog((line) => line.level === 40 && "remoteAddress" in line);
    expect(refused).toMatchObject({ remoteAddress: "127.0.0.1", refused: 1 });
  });

  it("takes a rotated token at SIGHUP, and never logs a token", async () => {
    await writeFile(tokenFile, "second-t0ken\n");
    const reloaded = (line: LogLine): boolean => line.msg === "configuration reloaded";
    daemon.signal("SIGHUP");
    await daemon.waitForLog(reloaded);
    // The re-read follows the reload line: poll until the new token is taken.
    await waitFor(async () => (await status("/metrics", "second-t0ken")) === 200, {
      what: "the rotated token",
    });
    expect(await status("/metrics", "first-t0ken")).toBe(401);
    expect(JSON.stringify(daemon.logs)).not.toMatch(/first-t0ken|second-t0ken/u);
  });

  it("keeps the token in effect when a reload finds the file gone (the reload fails, naming the key)", async () => {
    await rm(tokenFile);
    daemon.signal("SIGHUP");
    const failed = await daemon.waitForLog((line) =>
      String(line.msg).startsWith("configuration reload failed"),
    );
    expect(JSON.stringify(failed.problems)).toContain("http.auth.bearerTokenFile");
    expect(await status("/metrics", "second-t0ken")).toBe(200);
    expect(await status("/metrics")).toBe(401);
  });
});
