import { execFileSync } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/ConfigError.js";
import { checkHasWork } from "../../src/config/checkHasWork.js";
import { loadConfig } from "../../src/config/loadConfig.js";
import { runCli } from "../support/daemonProcess.js";
import { expectConfigError, loadContent, makeTempDir, type TempDir } from "./configFiles.js";

/** The ConfigError a load rejects with (fails the test when it resolves). */
async function failure(promise: Promise<unknown>): Promise<ConfigError> {
  const error: unknown = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

describe("loadConfig: files an operator gets wrong", () => {
  let dir: TempDir;
  beforeAll(async () => {
    dir = await makeTempDir();
  });
  afterAll(async () => {
    await dir.remove();
  });

  it("reports every problem of a file in one run", async () => {
    const error = await failure(
      loadContent(dir, {
        http: { port: "80x", bogus: 1 },
        sweep: { intervalMs: 0 },
        lease: { ttlMs: 100, renewDeadlineMs: 200 },
        groups: [
          { stream: "a", group: "g", action: "explode" },
          { stream: "b", maxDeliveries: 0 },
        ],
      }),
    );
    expect(error.problems.map((problem) => problem.key)).toEqual([
      "http.port",
      "http.bogus",
      "sweep.intervalMs",
      "groups[0].action",
      "groups[1].group",
      "groups[1].maxDeliveries",
      "lease.ttlMs",
    ]);
    expect(error.message.split("\n")).toHaveLength(7);
    for (const line of error.message.split("\n")) expect(line).toMatch(/^invalid configuration: /u);
  });

  it("rejects a URL password with a bare %, without printing it", async () => {
    const error = await expectConfigError(
      loadContent(dir, { redis: { url: "redis://:50%off@127.0.0.1:6379" } }),
      {
        key: "redis.url",
        value: "redis://:***@127.0.0.1:6379",
        expected: "a URL whose user name and password are percent-encoded (a % is written %25)",
      },
    );
    expect(error.message).not.toContain("50%off");
    // From the environment too.
    const fromEnv = await failure(
      loadConfig({ env: { STREAM_JANITOR_REDIS_URL: "redis://u:a%zz@host:1" } }),
    );
    expect(fromEnv.key).toBe("redis.url");
    expect(fromEnv.message).not.toContain("a%zz");
  });

  it("never prints the password of a malformed URL", async () => {
    for (const url of ["redis:/:hunter2@host", "redis:hunter2@host:6379", "//:hunter2@host"]) {
      const error = await failure(loadContent(dir, { redis: { url } }));
      expect(error.key).toBe("redis.url");
      expect(error.message).not.toContain("hunter2");
    }
  });

  describe("files that are not small regular files", () => {
    let fifo: string;
    let big: string;
    let huge: string;
    beforeAll(async () => {
      huge = await dir.write("huge.yaml", `# ${"x".repeat(4 * 1024 * 1024)}\n`);
      fifo = join(dir.path, "fifo.yaml");
      execFileSync("mkfifo", [fifo]);
      big = await dir.write("big.yaml", `# ${"x".repeat(70 * 1024)}\n`);
      await mkdir(join(dir.path, "folder.yaml"));
    });

    it("refuses a FIFO, a directory, a device or a file over 4 MiB as --config, at once", async () => {
      const cases: [string, RegExp][] = [
        [fifo, /a regular file \(found a FIFO\)/u],
        [join(dir.path, "folder.yaml"), /a regular file \(found a directory\)/u],
        [huge, /at most 4 MiB \(found \d+ bytes\)/u],
      ];
      for (const [configPath, expected] of cases) {
        const error = await failure(loadConfig({ configPath, env: {} }));
        expect(error.key).toBe(configPath);
        expect(error.expected).toMatch(expected);
      }
    });

    it("refuses a FIFO, a directory, /dev/zero or a file over 64 KiB as passwordFile", async () => {
      const cases: [string, RegExp][] = [
        [fifo, /found a FIFO/u],
        [dir.path, /found a directory/u],
        ["/dev/zero", /found a device/u],
        [big, /at most 64 KiB/u],
      ];
      for (const [passwordFile, expected] of cases) {
        const error = await failure(loadContent(dir, { redis: { passwordFile } }));
        expect(error.key).toBe("redis.passwordFile");
        expect(error.expected).toMatch(expected);
      }
    });
  });

  it("never quotes a secret from a YAML error or warning, and refuses both", async () => {
    for (const text of [
      "redis:\n  password: |s3cret\n",
      "redis:\n  password: !s3cret\n",
      'redis:\n  password: "s3cret\n',
      "redis:\n  pasword: !s3cret\n",
    ]) {
      const error = await failure(loadContent(dir, text));
      expect(error.expected).toMatch(/^valid YAML: [A-Z_]+ at line \d+, column \d+/u);
      expect(error.message).not.toContain("s3cret");
    }
  });

  it("refuses a requeueStream equal to the group's dead-letter stream", async () => {
    await expectConfigError(
      loadContent(dir, {
        groups: [{ stream: "orders", group: "g", requeueStream: "{orders}:dead" }],
      }),
      {
        key: "groups[0].requeueStream",
        value: "{orders}:dead",
        expected: "a stream other than the group's dead-letter stream ({orders}:dead)",
      },
    );
    await expectConfigError(
      loadContent(dir, {
        groups: [{ stream: "o", group: "g", requeueStream: "dl", deadLetterStream: "dl" }],
      }),
      {
        key: "groups[0].deadLetterStream",
        value: "dl",
        expected:
          "a stream other than the source stream and the requeue stream (dead letters would be delivered again)",
      },
    );
  });

  it("refuses an http.host that does not resolve", async () => {
    await expectConfigError(loadContent(dir, { http: { host: "no-such-host.invalid" } }), {
      key: "http.host",
      value: "no-such-host.invalid",
      expected: "an IP address or a host name that resolves (lookup failed: ENOTFOUND)",
    });
  });

  it("check-config accepts a configuration with nothing to do; run and sweep refuse it", async () => {
    await expect(loadContent(dir, {})).resolves.toMatchObject({ groups: [] });
    expect(() => checkHasWork({ groups: [] })).toThrow(ConfigError);
    expect(() => checkHasWork({ groups: [], retention: [{ stream: "s" }] })).not.toThrow();
    expect(() => checkHasWork({ groups: [], discover: [{ match: "*" }] })).not.toThrow();
    const path = await dir.write("empty.yaml", "log:\n  level: info\n");
    for (const command of ["run", "sweep"]) {
      const result = await runCli([command, "--config", path]);
      expect(result.code).toBe(78);
      expect(result.stderr).toContain("invalid configuration: groups");
    }
    expect((await runCli(["check-config", "--offline", "--config", path])).code).toBe(0);
  });

  it("run exits 78 (not a URIError) for a bare % in the URL password", async () => {
    const path = await dir.write(
      "percent.json",
      JSON.stringify({
        redis: { url: "redis://:100%sure@127.0.0.1:1" },
        groups: [{ stream: "s", group: "g" }],
      }),
    );
    const result = await runCli(["run", "--config", path]);
    expect(result.code).toBe(78);
    expect(result.stderr).toContain("redis.url");
    expect(result.stderr).not.toContain("100%sure");
    expect(result.stderr).not.toContain("URIError");
  });
});
