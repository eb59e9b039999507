import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisClient } from "../../src/redis/createRedisClient.js";
import { explainRedisError } from "../../src/redis/explainRedisError.js";
import { DaemonProcess, runCli, writeConfigFile } from "../support/daemonProcess.js";
import { freePort, startRedis, uniquePrefix, type RedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis(["--requirepass", "right-password"]);
});
afterAll(async () => {
  await server.stop();
});

/** The explanation of the first failure of INFO through the product's own client. */
async function explainFailure(url: string, password = ""): Promise<string> {
  const client = createRedisClient({
    url,
    password,
    connectionName: "test",
    commandTimeoutMs: 1000,
    logger: pino({ level: "silent" }),
  });
  try {
    await client.info("server");
    throw new Error("expected INFO to fail");
  } catch (error) {
    return explainRedisError(error, { url, client });
  } finally {
    client.disconnect();
  }
}

describe("errors an operator can act on", () => {
  it("connection refused names host:port and ECONNREFUSED", async () => {
    const port = await freePort();
    const problem = await explainFailure(`redis://127.0.0.1:${port}`);
    expect(problem).toContain(`127.0.0.1:${port}`);
    expect(problem).toContain("ECONNREFUSED");
    expect(problem).not.toMatch(/max retries/iu);
  });

  it("a TLS handshake that fails says TLS, not 'Command timed out'", async () => {
    const problem = await explainFailure(`rediss://127.0.0.1:${server.port}`);
    expect(problem).toMatch(/^TLS handshake with 127\.0\.0\.1:\d+/u);
  });

  it("a wrong password says authentication failed", async () => {
    const problem = await explainFailure(server.url, "wrong-password");
    expect(problem).toMatch(/^authentication failed at 127\.0\.0\.1:\d+ \(WRONGPASS\)/u);
    expect(problem).not.toContain("wrong-password");
  });

  it("NOPERM names the command and the ACL rule that would allow it", async () => {
    const admin = new Redis({ port: server.port, host: "127.0.0.1", password: "right-password" });
    await admin.call("ACL", "SETUSER", "limited", "on", ">pw", "~*", "+ping");
    admin.disconnect();
    const client = createRedisClient({
      url: server.url.replace("redis://", "redis://limited:pw@"),
      password: "",
      connectionName: "test",
      commandTimeoutMs: 1000,
      logger: pino({ level: "silent" }),
    });
    const error = await client.call("XAUTOCLAIM", "s", "g", "c", "0", "0").catch((e: unknown) => e);
    client.disconnect();
    const problem = explainRedisError(error, { url: server.url });
    expect(problem).toContain("XAUTOCLAIM");
    expect(problem).toContain("+xautoclaim");
  });

  it("the daemon says authentication failed in its log and in /readyz", async () => {
    const config = testConfig(server.url, uniquePrefix("wrongpass"), [{}]);
    config.redis.password = "wrong-password";
    const file = await writeConfigFile(config);
    const daemon = await DaemonProcess.start(file.path);
    try {
      await daemon.waitForLog((line) => String(line.problem).startsWith("authentication failed"));
      const body = await waitFor(
        async () => {
          const response = await fetch(`${daemon.httpUrl}/readyz`);
          const text = await response.text();
          return response.status === 503 && text.includes("authentication failed") && text;
        },
        { what: "/readyz to say why" },
      );
      expect(body).toMatch(/^not ready: redis is not answering: authentication failed at /u);
      expect(JSON.stringify(daemon.logs)).not.toContain("wrong-password");
    } finally {
      await daemon.kill();
      await file.remove();
    }
  });

  it("sweep against a closed port names host:port and ECONNREFUSED; its logs go to stderr", async () => {
    const port = await freePort();
    const config = testConfig(`redis://127.0.0.1:${port}`, uniquePrefix("refused"), [{}]);
    const file = await writeConfigFile(config);
    const result = await runCli(["sweep", "--config", file.path]);
    await file.remove();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `sweep failed: connection refused by 127.0.0.1:${port} (ECONNREFUSED)`,
    );
    expect(result.stdout).toBe("");
  });
});
