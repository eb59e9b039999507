import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { plainRedisConfig } from "../../src/config/defaultConfig.js";
import type { RedisTlsConfig } from "../../src/core/configTypes.js";
import { freePort } from "../../src/demo/spawnRedisServer.js";
import { DaemonProcess, runCli, writeConfigFile } from "../support/daemonProcess.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix } from "../support/redisServer.js";
import { startSentinelProcess } from "../support/sentinelSet.js";
import { testConfig } from "../support/testConfig.js";
import {
  makeTestCertificates,
  mutualTlsConfig,
  startTlsRedis,
  type TestCertificates,
  type TlsRedisServer,
} from "../support/tlsCertificates.js";

const MASTER = "tls-primary";

let certificates: TestCertificates;
let server: TlsRedisServer;
let redis: Redis;
let sentinelDir: string;
let sentinel: ChildProcess;
let sentinelPort: number;
const cleanups: (() => Promise<void>)[] = [];

/**
 * One Sentinel that listens on TLS only (no plain port, client certificates required) and
 * monitors the TLS-only primary over TLS: a janitor reaches either only through redis.tls.
 */
async function startTlsSentinel(primaryPort: number): Promise<ChildProcess> {
  sentinelDir = await mkdtemp(join(tmpdir(), "sj-sentinel-tls-"));
  sentinelPort = await freePort();
  const path = join(sentinelDir, "sentinel.conf");
  await writeFile(
    path,
    [
      "port 0",
      `tls-port ${sentinelPort}`,
      "bind 127.0.0.1",
      `dir ${sentinelDir}`,
      `tls-cert-file ${certificates.serverCertFile}`,
      `tls-key-file ${certificates.serverKeyFile}`,
      `tls-client-cert-file ${certificates.clientCertFile}`,
      `tls-client-key-file ${certificates.clientKeyFile}`,
      `tls-ca-cert-file ${certificates.caFile}`,
      "tls-auth-clients yes",
      // The Sentinel's own connections to the data nodes use TLS too.
      "tls-replication yes",
      `sentinel monitor ${MASTER} 127.0.0.1 ${primaryPort} 1`,
      "",
    ].join("\n"),
  );
  return startSentinelProcess(path);
}

beforeAll(async () => {
  certificates = await makeTestCertificates();
  server = await startTlsRedis(certificates);
  redis = server.client();
  sentinel = await startTlsSentinel(server.port);
}, 30_000);
afterAll(async () => {
  if (sentinel.exitCode === null) {
    const exited = once(sentinel, "exit");
    sentinel.kill("SIGKILL");
    await exited;
  }
  await server.stop();
  await rm(sentinelDir, { recursive: true, force: true });
  await certificates.remove();
});
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

function mutualTls(overrides: Partial<RedisTlsConfig> = {}): RedisTlsConfig {
  return mutualTlsConfig(certificates, overrides);
}

async function sentinelConfigFile(prefix: string, tls: RedisTlsConfig): Promise<string> {
  const url = `rediss://${MASTER}`;
  const config = testConfig(url, prefix, [{}], {
    redis: {
      ...plainRedisConfig(url),
      mode: "sentinel",
      nodes: [`127.0.0.1:${sentinelPort}`],
      masterName: MASTER,
      tls,
    },
    // The lease's connection times out after its retry period (1 s at the least), TLS handshake
    // included: seconds, so that a busy machine's slow handshakes (RSA, two TLS hops through the
    // Sentinel) are not taken for a TLS port that does not answer.
    lease: { key: `${prefix}:lease`, ttlMs: 30_000, renewDeadlineMs: 20_000, retryPeriodMs: 5000 },
  });
  const file = await writeConfigFile(config);
  cleanups.push(file.remove);
  return file.path;
}

describe("Sentinel over TLS (rediss://): the Sentinel and the primary both TLS-only", () => {
  it("sweeps through a TLS Sentinel and a TLS primary with the same redis.tls settings", async () => {
    const prefix = uniquePrefix("sentinel-tls");
    const stream = `${prefix}:stream`;
    await addStuckEntries(redis, stream, "workers", numberedBodies(40));
    const result = await runCli([
      "sweep",
      "--json",
      "--config",
      await sentinelConfigFile(prefix, mutualTls()),
    ]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as {
      groups: { claimed: number; requeued: number }[];
    };
    expect(summary.groups[0]).toMatchObject({ claimed: 40, requeued: 40 });
    expect((await redis.xpending(stream, "workers"))[0]).toBe(0);
  });

  it("says TLS and why when the Sentinel's certificate is not trusted, and is not ready", async () => {
    const path = await sentinelConfigFile(
      uniquePrefix("sentinel-tls-fail"),
      mutualTls({ caFile: certificates.otherCaFile }),
    );
    const daemon = await DaemonProcess.start(path);
    cleanups.push(() => daemon.kill());
    // ioredis alone reports "All sentinels are unreachable ... Connection is closed".
    const line = await daemon.waitForLog((l) =>
      /^TLS handshake failed: .*unknown CA.*redis\.tls\.caFile/u.test(String(l.msg)),
    );
    expect(JSON.stringify(line.err)).toMatch(/All sentinels are unreachable/u);
    expect((await fetch(`${daemon.httpUrl}/readyz`)).status).toBe(503);
  });
});
