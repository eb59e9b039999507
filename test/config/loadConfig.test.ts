import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/config/loadConfig.js";
import type { JanitorConfig } from "../../src/core/configTypes.js";
import { makeTempDir, plainRedisConfig, type TempDir } from "./configFiles.js";

const DEFAULTS: JanitorConfig = {
  redis: plainRedisConfig("redis://127.0.0.1:6379"),
  http: {
    host: "0.0.0.0",
    port: 9478,
    auth: { bearerTokenFile: "", basicAuthFile: "" },
    ui: { enabled: true, showBodies: false, historyMinutes: 60 },
  },
  log: { level: "info" },
  lease: {
    key: "stream-janitor:lease",
    ttlMs: 15000,
    renewDeadlineMs: 10000,
    retryPeriodMs: 2000,
    waitReplicas: 0,
    waitTimeoutMs: 500,
  },
  sweep: {
    intervalMs: 30000,
    batchSize: 1000,
    maxScriptMs: 2,
    maxEntriesPerGroup: 100000,
    consumerName: "stream-janitor",
  },
  metrics: {
    perConsumer: false,
    maxConsumersPerGroup: 50,
    pelScanIntervalMs: 60000,
    scrapeTimeoutMs: 2000,
    scrapeReadWaitMs: 500,
  },
  groups: [],
  discover: [],
  discovery: { intervalMs: 60000, maxGroups: 10000 },
  status: { intervalMs: 10000, window: 10, stuckAfterMs: 0 },
  events: { stream: "stream-janitor:events", maxLen: 10000 },
  retention: [],
};

const GROUP_DEFAULTS = {
  minIdleMs: 60000,
  maxDeliveries: 5,
  action: "requeue",
  requeueStream: "",
  deadLetterStream: "",
  deadLetterMaxLen: 0,
  retryLane: false,
  reapConsumersIdleMs: 0,
  backoffMs: [],
  backoffJitter: 0,
  deadLetterAfterIdleMs: 0,
};

const CONTRACT_YAML = `
redis:
  url: rediss://redis.internal:6380   # TLS
  passwordFile: ""
http:
  host: 127.0.0.1
  port: 9100
log:
  level: debug
lease:
  key: janitor:lease
  ttlMs: 9000
  renewDeadlineMs: 6000
  retryPeriodMs: 1000
sweep:
  intervalMs: 5000
  batchSize: 500
  maxEntriesPerGroup: 2000
groups:
  - stream: orders
    group: billing
    minIdleMs: 30000
    maxDeliveries: 3
    action: dead-letter
    deadLetterStream: "{orders}:dead"
    deadLetterMaxLen: 1000
    reapConsumersIdleMs: 3600000
  - stream: payments
    group: ledger
retention:
  - stream: orders
    maxLen: 1000000
    maxAgeMs: 0
`;

describe("loadConfig", () => {
  let dir: TempDir;
  beforeAll(async () => {
    dir = await makeTempDir();
  });
  afterAll(async () => {
    await dir.remove();
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("returns the defaults without a file", async () => {
    expect(await loadConfig({ env: {} })).toEqual(DEFAULTS);
  });

  it("reads a YAML file and fills in group defaults", async () => {
    const configPath = await dir.write("contract.yaml", CONTRACT_YAML);
    const config = await loadConfig({ configPath, env: {} });
    expect(config).toEqual({
      redis: plainRedisConfig("rediss://redis.internal:6380"),
      http: { ...DEFAULTS.http, host: "127.0.0.1", port: 9100 },
      log: { level: "debug" },
      lease: {
        key: "janitor:lease",
        ttlMs: 9000,
        renewDeadlineMs: 6000,
        retryPeriodMs: 1000,
        waitReplicas: 0,
        waitTimeoutMs: 500,
      },
      sweep: {
        intervalMs: 5000,
        batchSize: 500,
        maxScriptMs: 2,
        maxEntriesPerGroup: 2000,
        consumerName: "stream-janitor",
      },
      metrics: DEFAULTS.metrics,
      groups: [
        {
          stream: "orders",
          group: "billing",
          minIdleMs: 30000,
          maxDeliveries: 3,
          action: "dead-letter",
          requeueStream: "",
          deadLetterStream: "{orders}:dead",
          deadLetterMaxLen: 1000,
          retryLane: false,
          reapConsumersIdleMs: 3_600_000,
          backoffMs: [],
          backoffJitter: 0,
          deadLetterAfterIdleMs: 0,
        },
        { stream: "payments", group: "ledger", ...GROUP_DEFAULTS },
      ],
      discover: DEFAULTS.discover,
      discovery: DEFAULTS.discovery,
      status: DEFAULTS.status,
      events: DEFAULTS.events,
      retention: [{ stream: "orders", maxLen: 1_000_000, maxAgeMs: 0 }],
    });
  });

  it("reads a JSON file, keeping defaults for what it leaves out", async () => {
    const json = { http: { port: 0 }, groups: [{ stream: "s", group: "g", action: "monitor" }] };
    const configPath = await dir.write("partial.json", JSON.stringify(json));
    const config = await loadConfig({ configPath, env: {} });
    expect(config).toEqual({
      ...DEFAULTS,
      http: { ...DEFAULTS.http, host: "0.0.0.0", port: 0 },
      groups: [{ stream: "s", group: "g", ...GROUP_DEFAULTS, action: "monitor" }],
    });
  });

  it("reads a .yml file", async () => {
    const configPath = await dir.write("short.yml", "log:\n  level: warn\n");
    expect((await loadConfig({ configPath, env: {} })).log.level).toBe("warn");
  });

  it("treats an empty YAML file, and emptied sections, as defaults", async () => {
    const empty = await dir.write("empty.yaml", "# everything commented out\n");
    expect(await loadConfig({ configPath: empty, env: {} })).toEqual(DEFAULTS);
    const emptied = await dir.write("emptied.yaml", "redis:\ngroups:\n");
    expect(await loadConfig({ configPath: emptied, env: {} })).toEqual(DEFAULTS);
  });

  it("lets every environment override beat the file", async () => {
    const passwordFile = await dir.write("env-password", "from-file\n");
    const configPath = await dir.write("overridden.yaml", CONTRACT_YAML);
    const config = await loadConfig({
      configPath,
      env: {
        STREAM_JANITOR_REDIS_URL: "redis://other:6379",
        STREAM_JANITOR_REDIS_PASSWORD: "from-env",
        STREAM_JANITOR_HTTP_HOST: "::",
        STREAM_JANITOR_HTTP_PORT: "4321",
        STREAM_JANITOR_LOG_LEVEL: "error",
      },
    });
    expect(config.redis).toEqual({
      ...plainRedisConfig("redis://other:6379"),
      password: "from-env",
    });
    expect(config.http).toEqual({ ...DEFAULTS.http, host: "::", port: 4321 });
    expect(config.log.level).toBe("error");

    const withFile = await loadConfig({
      configPath,
      env: { STREAM_JANITOR_REDIS_PASSWORD_FILE: passwordFile },
    });
    expect(withFile.redis).toMatchObject({ password: "from-file", passwordFile });
  });

  it("takes the file from STREAM_JANITOR_CONFIG, and --config over it", async () => {
    const fromEnv = await dir.write("from-env.yaml", "log:\n  level: trace\n");
    const fromFlag = await dir.write("from-flag.json", '{"log":{"level":"fatal"}}');
    const env = { STREAM_JANITOR_CONFIG: fromEnv };
    expect((await loadConfig({ env })).log.level).toBe("trace");
    expect((await loadConfig({ configPath: fromFlag, env })).log.level).toBe("fatal");
    expect((await loadConfig({ configPath: undefined, env })).log.level).toBe("trace");
  });

  it("never reads the global process.env", async () => {
    vi.stubEnv("STREAM_JANITOR_LOG_LEVEL", "debug");
    vi.stubEnv("STREAM_JANITOR_HTTP_PORT", "1");
    expect(await loadConfig({ env: {} })).toEqual(DEFAULTS);
  });

  it("returns a fresh copy each time", async () => {
    const configPath = await dir.write("copy.yaml", CONTRACT_YAML);
    const first = await loadConfig({ configPath, env: {} });
    first.http.port = 1;
    const group = first.groups[0];
    if (group !== undefined) group.maxDeliveries = 99;
    const second = await loadConfig({ configPath, env: {} });
    expect(second.http.port).toBe(9100);
    expect(second.groups[0]?.maxDeliveries).toBe(3);
  });
});
