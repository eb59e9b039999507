import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DURATION,
  GROUP,
  SECTIONS,
  expectConfigError,
  loadOrValidate,
  makeTempDir,
  withGroup,
  type TempDir,
} from "./configFiles.js";

describe("configuration validation", () => {
  let dir: TempDir;
  beforeAll(async () => {
    dir = await makeTempDir();
  });
  afterAll(async () => {
    await dir.remove();
  });

  const load = (content: object | string, env: NodeJS.ProcessEnv = {}) =>
    loadOrValidate(dir, content, env);

  describe("unknown keys", () => {
    it("rejects an unknown top-level section", async () => {
      await expectConfigError(load({ tracing: { port: 1 } }), {
        key: "tracing",
        value: { port: 1 },
        expected: `a known section: one of ${SECTIONS}`,
      });
    });

    it("rejects an unknown key inside a section", async () => {
      await expectConfigError(load({ redis: { host: "localhost" } }), {
        key: "redis.host",
        value: "localhost",
        expected:
          "a known redis key: one of url, mode, nodes, masterName, username, password, passwordFile, sentinelPassword, sentinelPasswordFile, tls",
      });
    });

    it("rejects an unknown key inside a group", async () => {
      await expectConfigError(load(withGroup({ maxRetries: 3 })), {
        key: "groups[0].maxRetries",
        value: 3,
        expected:
          "a known group key: one of stream, group, minIdleMs, maxDeliveries, action, " +
          "requeueStream, deadLetterStream, deadLetterMaxLen, retryLane, reapConsumersIdleMs, " +
          "backoffMs, backoffJitter, deadLetterAfterIdleMs",
      });
    });

    it("masks the value of a misspelt secret key", async () => {
      const error = await expectConfigError(load({ redis: { pasword: "hunter2" } }), {
        key: "redis.pasword",
        value: "***",
        expected:
          "a known redis key: one of url, mode, nodes, masterName, username, password, passwordFile, sentinelPassword, sentinelPasswordFile, tls",
      });
      expect(error.message).not.toContain("hunter2");
    });

    it("rejects __proto__ as a key", async () => {
      await expectConfigError(load("__proto__:\n  polluted: 1\n"), {
        key: "__proto__",
        value: { polluted: 1 },
        expected: `a known section: one of ${SECTIONS}`,
      });
    });
  });

  describe("types", () => {
    it("rejects a section that is not a mapping", async () => {
      await expectConfigError(load({ http: 8080 }), {
        key: "http",
        value: 8080,
        expected: "a mapping of http settings",
      });
    });

    it("rejects a number given as a string (convict would coerce it)", async () => {
      await expectConfigError(load({ http: { port: "9478" } }), {
        key: "http.port",
        value: "9478",
        expected: "an integer between 0 and 65535",
      });
    });

    it("rejects a non-string password and masks it", async () => {
      const error = await expectConfigError(load("redis:\n  password: 123456\n"), {
        key: "redis.password",
        value: "***",
        expected: "a string",
      });
      expect(error.message).not.toContain("123456");
    });

    it("rejects groups that are not a list", async () => {
      await expectConfigError(load({ groups: GROUP }), {
        key: "groups",
        value: GROUP,
        expected: "a list of groups",
      });
    });

    it("rejects a group that is not a mapping", async () => {
      await expectConfigError(load({ groups: ["orders"] }), {
        key: "groups[0]",
        value: "orders",
        expected: "a mapping with at least stream and group",
      });
    });
  });

  describe("redis, http and log", () => {
    it("rejects a redis.url that is not redis:// or rediss://, masking its password", async () => {
      await expectConfigError(load({ redis: { url: "http://user:secret@localhost:6379" } }), {
        key: "redis.url",
        value: "http://user:***@localhost:6379",
        expected: "a URL starting with redis://, rediss:// or unix:///",
      });
    });

    it("rejects a port above 65535", async () => {
      await expectConfigError(load({ http: { port: 65536 } }), {
        key: "http.port",
        value: 65536,
        expected: "an integer between 0 and 65535",
      });
    });

    it("rejects a fractional port", async () => {
      await expectConfigError(load({ http: { port: 80.5 } }), {
        key: "http.port",
        value: 80.5,
        expected: "an integer between 0 and 65535",
      });
    });

    it("accepts port 0 (ephemeral)", async () => {
      expect((await load({ http: { port: 0 } })).http.port).toBe(0);
    });

    it("rejects an empty http.host", async () => {
      await expectConfigError(load({ http: { host: "" } }), {
        key: "http.host",
        value: "",
        expected: "a non-empty string",
      });
    });

    it("rejects a log level pino does not know", async () => {
      await expectConfigError(load({ log: { level: "verbose" } }), {
        key: "log.level",
        value: "verbose",
        expected: "one of fatal, error, warn, info, debug, trace, silent",
      });
    });
  });

  describe("lease and sweep", () => {
    it("rejects a negative duration", async () => {
      await expectConfigError(load({ lease: { retryPeriodMs: -1 } }), {
        key: "lease.retryPeriodMs",
        value: -1,
        expected: DURATION,
      });
    });

    it("rejects a fractional duration", async () => {
      await expectConfigError(load({ sweep: { intervalMs: 1.5 } }), {
        key: "sweep.intervalMs",
        value: 1.5,
        expected: DURATION,
      });
    });

    it("rejects a duration longer than a Node timer can wait", async () => {
      await expectConfigError(load({ sweep: { intervalMs: 2 ** 31 } }), {
        key: "sweep.intervalMs",
        value: 2 ** 31,
        expected: DURATION,
      });
    });

    it("rejects an empty lease key", async () => {
      await expectConfigError(load({ lease: { key: "" } }), {
        key: "lease.key",
        value: "",
        expected: "a non-empty string",
      });
    });

    it("rejects ttlMs not above renewDeadlineMs", async () => {
      await expectConfigError(load({ lease: { ttlMs: 10000, renewDeadlineMs: 10000 } }), {
        key: "lease.ttlMs",
        value: 10000,
        expected:
          "more than lease.renewDeadlineMs (10000); " +
          "rule: ttlMs > renewDeadlineMs > 1.2 * retryPeriodMs",
      });
    });

    it("rejects renewDeadlineMs not above 1.2 * retryPeriodMs", async () => {
      await expectConfigError(load({ lease: { renewDeadlineMs: 6000, retryPeriodMs: 5000 } }), {
        key: "lease.renewDeadlineMs",
        value: 6000,
        expected:
          "more than 1.2 * lease.retryPeriodMs (6000); " +
          "rule: ttlMs > renewDeadlineMs > 1.2 * retryPeriodMs",
      });
      const config = await load({ lease: { renewDeadlineMs: 6001, retryPeriodMs: 5000 } });
      expect(config.lease.renewDeadlineMs).toBe(6001);
    });

    it("accepts millisecond-scale timings for tests and demos", async () => {
      const config = await load({
        lease: { ttlMs: 30, renewDeadlineMs: 20, retryPeriodMs: 5 },
        sweep: { intervalMs: 50 },
        ...withGroup({ minIdleMs: 1 }),
      });
      expect(config.lease).toMatchObject({ ttlMs: 30, renewDeadlineMs: 20, retryPeriodMs: 5 });
      expect(config.sweep.intervalMs).toBe(50);
      expect(config.groups[0]?.minIdleMs).toBe(1);
    });

    it("rejects a batch size of 0", async () => {
      await expectConfigError(load({ sweep: { batchSize: 0 } }), {
        key: "sweep.batchSize",
        value: 0,
        expected: "an integer between 1 and 10000",
      });
    });

    it("rejects a batch size above 10000", async () => {
      await expectConfigError(load({ sweep: { batchSize: 10001 } }), {
        key: "sweep.batchSize",
        value: 10001,
        expected: "an integer between 1 and 10000",
      });
    });

    it("defaults the sweep to pages of at most 1000 entries in 2 ms calls, as stream-janitor", async () => {
      const config = await load({});
      expect(config.sweep).toMatchObject({
        batchSize: 1000,
        maxScriptMs: 2,
        consumerName: "stream-janitor",
      });
    });

    it("rejects a script budget of 0 ms and an empty consumer name", async () => {
      await expectConfigError(load({ sweep: { maxScriptMs: 0 } }), {
        key: "sweep.maxScriptMs",
        value: 0,
        expected:
          "an integer number of milliseconds between 1 and 60000, or the same with a unit (500ms, 30s, 5m, 2h, 7d)",
      });
      await expectConfigError(load({ sweep: { consumerName: "" } }), {
        key: "sweep.consumerName",
        value: "",
        expected: "a non-empty string",
      });
    });

    it("rejects maxEntriesPerGroup below 1", async () => {
      await expectConfigError(load({ sweep: { maxEntriesPerGroup: 0 } }), {
        key: "sweep.maxEntriesPerGroup",
        value: 0,
        expected: "an integer >= 1",
      });
    });
  });
});
