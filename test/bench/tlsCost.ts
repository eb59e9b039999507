/**
 * Scenario 6: what TLS costs the sweep. One redis-server listens on a plain port and on a TLS
 * port (mutual TLS, certificates made by openssl for the run); the same seeded PEL is swept
 * through each, alternating, with the production connection factory and sweep code.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { pino } from "pino";
import { plainRedisConfig } from "../../src/config/defaultConfig.js";
import type { RedisConfig } from "../../src/core/configTypes.js";
import { freePort, spawnRedisServer } from "../../src/demo/spawnRedisServer.js";
import { createRedisClient } from "../../src/redis/createRedisClient.js";
import { registerScripts, type ScriptedRedis } from "../../src/scripts/scriptedRedis.js";
import { makeTestCertificates, tlsServerArgs } from "../support/tlsCertificates.js";
import { BENCH_FENCE, LEASE_KEY, benchGroup, janitorSweep } from "./janitorSweep.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { copyStream, pendingCount, seedStuckPel } from "./seed.js";
import { median } from "./stats.js";
import type { Table } from "./table.js";

const TEMPLATE = "template";
const STREAM = "orders";
const GROUP = "billing";
const TRANSPORTS = ["plain", "TLS (mutual)"] as const;
type Transport = (typeof TRANSPORTS)[number];

async function connect(redis: RedisConfig): Promise<ScriptedRedis> {
  const client = createRedisClient({
    ...redis,
    connectionName: "stream-janitor:sweep",
    commandTimeoutMs: 60_000,
    logger: pino({ level: "silent" }),
  });
  await client.connect();
  return registerScripts(client);
}

export async function tlsCostScenario(options: BenchOptions): Promise<ScenarioResult> {
  const size = options.quick ? 20_000 : 100_000;
  const reps = options.quick ? 2 : 3;
  const certificates = await makeTestCertificates();
  const dir = await mkdtemp(join(tmpdir(), "sj-bench-tls-"));
  const plainPort = await freePort();
  const tlsPort = await freePort();
  const server = await spawnRedisServer({
    port: plainPort,
    dir,
    extraArgs: [...tlsServerArgs(certificates, tlsPort), "--port", String(plainPort)],
  });
  const settings: Record<Transport, RedisConfig> = {
    plain: plainRedisConfig(`redis://127.0.0.1:${plainPort}`),
    "TLS (mutual)": {
      ...plainRedisConfig(`rediss://127.0.0.1:${tlsPort}`),
      tls: {
        caFile: certificates.caFile,
        certFile: certificates.clientCertFile,
        keyFile: certificates.clientKeyFile,
        serverName: "",
      },
    },
  };
  const admin = new Redis({ host: "127.0.0.1", port: plainPort, protocol: 2 });
  const runs: { transport: Transport; batchSize: number; entriesPerSecond: number }[] = [];
  try {
    await admin.set(LEASE_KEY, BENCH_FENCE.value);
    options.log(`  tls: seeding ${size} stuck entries`);
    await seedStuckPel(admin, TEMPLATE, GROUP, size);
    const group = benchGroup(STREAM, GROUP, "requeue");
    for (const batchSize of [100, 1000]) {
      for (let rep = 0; rep < reps; rep += 1) {
        for (const transport of TRANSPORTS) {
          await copyStream(admin, TEMPLATE, STREAM);
          const janitor = await connect(settings[transport]);
          const started = performance.now();
          const result = await janitorSweep(janitor, group, { batchSize, maxScriptMs: 2 });
          const seconds = (performance.now() - started) / 1000;
          janitor.disconnect();
          if (result.claimed !== size || (await pendingCount(admin, STREAM, GROUP)) !== 0) {
            throw new Error(`tls bench: ${transport} claimed ${result.claimed} of ${size}`);
          }
          runs.push({ transport, batchSize, entriesPerSecond: size / seconds });
          options.log(
            `  tls: ${transport} b${batchSize} rep ${rep}: ${(size / seconds).toFixed(0)}/s`,
          );
        }
      }
    }
  } finally {
    admin.disconnect();
    server.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
    await certificates.remove();
  }
  const rows: (string | number)[][] = [];
  for (const batchSize of [100, 1000]) {
    const of = (transport: Transport): number =>
      median(
        runs
          .filter((r) => r.transport === transport && r.batchSize === batchSize)
          .map((r) => r.entriesPerSecond),
      );
    const plain = of("plain");
    const tls = of("TLS (mutual)");
    rows.push([batchSize, plain, tls, `${(((plain - tls) / plain) * 100).toFixed(1)} %`]);
  }
  const table: Table = {
    title: `Cost of TLS on sweep throughput (${size.toLocaleString("en-US")} stuck entries, requeue, median of ${reps})`,
    columns: ["batchSize", "plain, entries/s", "TLS (mutual), entries/s", "TLS cost"],
    rows,
    notes: [
      "Same redis-server, same run: a plain port and a TLS port (ECDSA P-256 certificates, client certificate required); runs alternate.",
      "Entry bodies never cross the connection (the page script moves them inside Redis), so TLS only carries the page replies.",
    ],
  };
  return { name: "tls", tables: [table], targets: [], raw: runs };
}
