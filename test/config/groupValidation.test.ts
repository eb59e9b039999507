import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DURATION,
  GROUP,
  expectConfigError,
  loadOrValidate,
  makeTempDir,
  withGroup,
  type TempDir,
} from "./configFiles.js";

describe("configuration validation: metrics, groups and environment", () => {
  let dir: TempDir;
  beforeAll(async () => {
    dir = await makeTempDir();
  });
  afterAll(async () => {
    await dir.remove();
  });

  const load = (content: object | string, env: NodeJS.ProcessEnv = {}) =>
    loadOrValidate(dir, content, env);

  describe("metrics", () => {
    it("rejects a metrics.perConsumer that is not a boolean (convict reads any string as true)", async () => {
      await expectConfigError(load({ metrics: { perConsumer: "no" } }), {
        key: "metrics.perConsumer",
        value: "no",
        expected: "true or false",
      });
    });

    it("rejects a metrics.maxConsumersPerGroup of 0", async () => {
      await expectConfigError(load({ metrics: { maxConsumersPerGroup: 0 } }), {
        key: "metrics.maxConsumersPerGroup",
        value: 0,
        expected: "an integer between 1 and 10000",
      });
    });
  });

  describe("groups", () => {
    it("rejects an empty stream name", async () => {
      await expectConfigError(load(withGroup({ stream: "" })), {
        key: "groups[0].stream",
        value: "",
        expected: "a non-empty string",
      });
    });

    it("rejects a group without a group name", async () => {
      await expectConfigError(load({ groups: [{ stream: "orders" }] }), {
        key: "groups[0].group",
        value: undefined,
        expected: "a non-empty string (required)",
      });
    });

    it("rejects maxDeliveries of 0 with the documented message", async () => {
      const config = {
        groups: [
          { stream: "a", group: "g" },
          { ...GROUP, maxDeliveries: 0 },
        ],
      };
      const error = await expectConfigError(load(config), {
        key: "groups[1].maxDeliveries",
        value: 0,
        expected: "an integer >= 1",
      });
      expect(error.message).toBe(
        "invalid configuration: groups[1].maxDeliveries = 0: expected an integer >= 1",
      );
    });

    it("accepts deadLetterMaxLen 0 (never trimmed, the default) and rejects a negative one", async () => {
      const config = await load(withGroup({ deadLetterMaxLen: 0 }));
      expect(config.groups[0]?.deadLetterMaxLen).toBe(0);
      await expectConfigError(load(withGroup({ deadLetterMaxLen: -1 })), {
        key: "groups[0].deadLetterMaxLen",
        value: -1,
        expected: "an integer >= 0",
      });
    });

    it("rejects an unknown action", async () => {
      await expectConfigError(load(withGroup({ action: "delete" })), {
        key: "groups[0].action",
        value: "delete",
        expected: "one of requeue, reassign, dead-letter, monitor",
      });
    });

    it("rejects a negative minIdleMs", async () => {
      await expectConfigError(load(withGroup({ minIdleMs: -5 })), {
        key: "groups[0].minIdleMs",
        value: -5,
        expected: DURATION,
      });
    });

    it("rejects a duplicate stream/group pair, naming both indexes", async () => {
      const groups = [GROUP, { stream: "orders", group: "shipping" }, { ...GROUP, minIdleMs: 5 }];
      await expectConfigError(load({ groups }), {
        key: "groups[2]",
        value: GROUP,
        expected: "a stream/group pair not configured already (groups[0] has it)",
      });
    });

    it("rejects dead-lettering into the source stream", async () => {
      await expectConfigError(
        load(withGroup({ action: "dead-letter", deadLetterStream: "orders" })),
        {
          key: "groups[0].deadLetterStream",
          value: "orders",
          expected:
            "a stream other than the source stream and the requeue stream " +
            "(dead letters would be delivered again)",
        },
      );
    });

    it("rejects dead-lettering into the requeue stream of a requeue group", async () => {
      const group = { requeueStream: "orders-retry", deadLetterStream: "orders-retry" };
      await expectConfigError(load(withGroup(group)), {
        key: "groups[0].deadLetterStream",
        value: "orders-retry",
        expected:
          "a stream other than the source stream and the requeue stream " +
          "(dead letters would be delivered again)",
      });
    });

    it("accepts a requeueStream equal to the source stream", async () => {
      const config = await load(withGroup({ requeueStream: "orders" }));
      expect(config.groups[0]?.requeueStream).toBe("orders");
    });
  });

  describe("environment overrides", () => {
    it("rejects a port from the environment that is not all digits", async () => {
      await expectConfigError(load({}, { STREAM_JANITOR_HTTP_PORT: "80x" }), {
        key: "http.port",
        value: "80x",
        expected: "an integer between 0 and 65535 (from STREAM_JANITOR_HTTP_PORT)",
      });
    });

    it("rejects an out-of-range port from the environment", async () => {
      await expectConfigError(load({}, { STREAM_JANITOR_HTTP_PORT: "70000" }), {
        key: "http.port",
        value: 70000,
        expected: "an integer between 0 and 65535 (from STREAM_JANITOR_HTTP_PORT)",
      });
    });

    it("rejects an unknown log level from the environment", async () => {
      await expectConfigError(load({}, { STREAM_JANITOR_LOG_LEVEL: "verbose" }), {
        key: "log.level",
        value: "verbose",
        expected:
          "one of fatal, error, warn, info, debug, trace, silent (from STREAM_JANITOR_LOG_LEVEL)",
      });
    });

    it("rejects a bad redis URL from the environment, masking its password", async () => {
      const env = { STREAM_JANITOR_REDIS_URL: "tcp://:s3cret@redis:6379" };
      const error = await expectConfigError(load({}, env), {
        key: "redis.url",
        value: "tcp://:***@redis:6379",
        expected:
          "a URL starting with redis://, rediss:// or unix:/// (from STREAM_JANITOR_REDIS_URL)",
      });
      expect(error.message).not.toContain("s3cret");
    });
  });
});
