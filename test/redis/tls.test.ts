import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Redis } from "ioredis";
import { plainRedisConfig } from "../../src/config/defaultConfig.js";
import type { RedisTlsConfig } from "../../src/core/configTypes.js";
import { defaultDeadLetterStream } from "../../src/core/resolveGroup.js";
import { DaemonProcess, runCli, writeConfigFile } from "../support/daemonProcess.js";
import { expectExactlyOnce } from "../support/expectExactlyOnce.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import {
  makeTestCertificates,
  mutualTlsConfig,
  startTlsRedis,
  type TestCertificates,
  type TlsRedisServer,
} from "../support/tlsCertificates.js";
import { waitFor } from "../support/waitFor.js";

let certificates: TestCertificates;
let server: TlsRedisServer;
let redis: Redis;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  certificates = await makeTestCertificates();
  server = await startTlsRedis(certificates);
  redis = server.client();
});
afterAll(async () => {
  await server.stop();
  await certificates.remove();
});
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

function mutualTls(overrides: Partial<RedisTlsConfig> = {}): RedisTlsConfig {
  return mutualTlsConfig(certificates, overrides);
}

async function configFile(prefix: string, tls: RedisTlsConfig, url = server.url): Promise<string> {
  const config = testConfig(url, prefix, [{ minIdleMs: 1000 }], {
    redis: { ...plainRedisConfig(url), tls },
  });
  const file = await writeConfigFile(config);
  cleanups.push(file.remove);
  return file.path;
}

describe("TLS with a private CA and mutual TLS", () => {
  it("runs the daemon through mutual TLS: ready, leader, sweeping, named connections", async () => {
    const prefix = uniquePrefix("mtls");
    const stream = `${prefix}:stream`;
    const ids = await addStuckEntries(redis, stream, "workers", numberedBodies(200));
    const daemon = await DaemonProcess.start(await configFile(prefix, mutualTls()));
    cleanups.push(() => daemon.kill());

    await waitFor(async () => (await fetch(`${daemon.httpUrl}/readyz`)).status === 200, {
      what: "/readyz 200 over TLS",
    });
    await waitFor(() => daemon.isLeader(), { what: "leadership over TLS" });
    await waitFor(async () => (await redis.xpending(stream, "workers"))[0] === 0, {
      what: "the stuck entries to be requeued",
    });
    const outcome = await expectExactlyOnce(redis, {
      stream,
      group: "workers",
      deadLetterStream: defaultDeadLetterStream(stream),
      originalIds: ids,
    });
    expect(outcome.requeued).toBe(200);
    expect(await daemon.metric("stream_janitor_redis_up")).toBe(1);
    const clients = String(await redis.call("CLIENT", "LIST"));
    for (const name of ["sweep", "metrics", "lease"]) {
      expect(clients).toContain(`name=stream-janitor:${name}`);
    }
    daemon.signal("SIGTERM");
    expect((await daemon.exited).code).toBe(0);
    expect(await redis.exists(`${prefix}:lease`)).toBe(0);
  });

  const failures: [string, () => Partial<RedisTlsConfig>, RegExp][] = [
    [
      "an unknown CA",
      () => ({ caFile: certificates.otherCaFile }),
      /unknown CA.*redis\.tls\.caFile/u,
    ],
    ["a name mismatch", () => ({ serverName: "redis.example.com" }), /name mismatch.*serverName/u],
    [
      "a missing client certificate",
      () => ({ certFile: "", keyFile: "" }),
      /client certificate.*redis\.tls\.certFile/u,
    ],
  ];
  it("the daemon says TLS and why (unknown CA, name mismatch, no client certificate), and is not ready", async () => {
    // Three daemons at once: each mostly waits on reconnect backoffs.
    await Promise.all(
      failures.map(async ([, tls, why]) => {
        const daemon = await DaemonProcess.start(
          await configFile(uniquePrefix("tls-fail"), mutualTls(tls())),
        );
        cleanups.push(() => daemon.kill());
        const line = await daemon.waitForLog((l) => why.test(String(l.msg)));
        expect(String(line.msg)).toMatch(/^TLS handshake failed: /u);
        // What start-up reports while it retries is the TLS reason, not "Command timed out".
        const waiting = await daemon.waitForLog(
          (l) => l.msg === "redis is not answering yet; retrying",
        );
        expect(JSON.stringify(waiting.err)).toMatch(/TLS handshake failed/u);
        expect((await fetch(`${daemon.httpUrl}/readyz`)).status).toBe(503);
      }),
    );
  });

  it("sweep exits 1 and its message names TLS and the reason", async () => {
    const path = await configFile(
      uniquePrefix("tls-sweep-fail"),
      mutualTls({ caFile: certificates.otherCaFile }),
    );
    const result = await runCli(["sweep", "--config", path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/sweep failed: TLS handshake failed: .*unknown CA/u);
  });

  it.each([
    ["caFile", { caFile: "/nonexistent/ca.pem" }],
    ["certFile", { certFile: "/nonexistent/client.pem" }],
    ["keyFile", { keyFile: "/nonexistent/client.key" }],
  ] as const)("exits 78 naming redis.tls.%s when the file is missing", async (key, overrides) => {
    const path = await configFile(uniquePrefix("tls-78"), mutualTls(overrides));
    for (const command of key === "caFile" ? ["run", "check-config"] : ["check-config"]) {
      const result = await runCli([command, "--config", path]);
      expect(result.code).toBe(78);
      expect(result.stderr).toContain(`redis.tls.${key}`);
      expect(result.stderr).toContain("ENOENT");
    }
  });

  it("exits 78 when a certificate file does not hold a certificate", async () => {
    const path = await configFile(
      uniquePrefix("tls-78-pem"),
      mutualTls({ caFile: certificates.clientKeyFile }),
    );
    const result = await runCli(["check-config", "--config", path]);
    expect(result.code).toBe(78);
    expect(result.stderr).toContain("redis.tls.caFile");
    expect(result.stderr).not.toContain("PRIVATE KEY");
  });
});
