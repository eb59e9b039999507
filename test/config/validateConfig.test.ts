import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/ConfigError.js";
import {
  defaultConfig,
  defaultGroupConfig,
  plainRedisConfig,
} from "../../src/config/defaultConfig.js";
import { loadConfig } from "../../src/config/loadConfig.js";
import { validateConfig } from "../../src/config/validateConfig.js";

describe("defaultConfig", () => {
  it("is what loadConfig and validateConfig give for an empty configuration", async () => {
    expect(await loadConfig({ env: {} })).toEqual(defaultConfig());
    expect(validateConfig({})).toEqual(defaultConfig());
  });

  it("is a fresh object at each call", () => {
    const changed = defaultConfig();
    changed.redis.nodes.push("a:1");
    changed.sweep.batchSize = 1;
    expect(defaultConfig().redis.nodes).toEqual([]);
    expect(defaultConfig().sweep.batchSize).toBe(validateConfig({}).sweep.batchSize);
  });

  it("has group and redis defaults as validateConfig fills them in", () => {
    const config = validateConfig({
      redis: { url: "redis://elsewhere:6380" },
      groups: [{ stream: "orders", group: "billing" }],
    });
    expect(config.groups[0]).toEqual(defaultGroupConfig("orders", "billing"));
    expect(config.redis).toEqual(plainRedisConfig("redis://elsewhere:6380"));
  });
});

describe("validateConfig", () => {
  it("takes durations with units and the environment's overrides, not process.env", () => {
    process.env.STREAM_JANITOR_LOG_LEVEL = "trace";
    try {
      expect(validateConfig({ sweep: { intervalMs: "5s" } }).log.level).toBe("info");
      const config = validateConfig(
        { sweep: { intervalMs: "5s" }, log: { level: "warn" } },
        { STREAM_JANITOR_LOG_LEVEL: "debug" },
      );
      expect(config.sweep.intervalMs).toBe(5000);
      expect(config.log.level).toBe("debug");
    } finally {
      delete process.env.STREAM_JANITOR_LOG_LEVEL;
    }
  });

  it("reports every problem in one ConfigError, the redis.* rules included", () => {
    const error = (() => {
      try {
        validateConfig({ redis: { mode: "sentinel" }, sweep: { batchSize: 0 } });
        return undefined;
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((problem) => problem.key)).toEqual([
      "sweep.batchSize",
      "redis.nodes",
    ]);
  });

  it("reads no file and resolves no host: loadConfig does", async () => {
    const input = {
      http: { host: "no-such-host.invalid" },
      redis: { passwordFile: "/nonexistent/password" },
    };
    expect(validateConfig(input).redis.passwordFile).toBe("/nonexistent/password");
    await expect(
      loadConfig({ env: { STREAM_JANITOR_REDIS_PASSWORD_FILE: "/nonexistent/password" } }),
    ).rejects.toThrow(ConfigError);
  });
});
