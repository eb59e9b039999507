import { describe, expect, it } from "vitest";
import { formatEffectiveConfig, maskRedisUrl } from "../../src/config/formatEffectiveConfig.js";
import { loadConfig } from "../../src/config/loadConfig.js";

describe("formatEffectiveConfig", () => {
  it("prints pretty JSON with the password and URL credentials masked", async () => {
    const config = await loadConfig({
      env: {
        STREAM_JANITOR_REDIS_URL: "rediss://janitor:hunter2@redis.internal:6380/0",
        STREAM_JANITOR_REDIS_PASSWORD: "topsecret",
      },
    });
    const text = formatEffectiveConfig(config);
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("topsecret");
    expect(text).toContain('\n  "redis": {\n    "url"');
    const shown = JSON.parse(text) as typeof config;
    expect(shown.redis).toEqual({
      url: "rediss://janitor:***@redis.internal:6380/0",
      password: "***",
      passwordFile: "",
      mode: "standalone",
      nodes: [],
    });
    expect({ ...shown, redis: config.redis }).toEqual(config);
    expect(config.redis.password).toBe("topsecret");
  });

  it("shows an empty password as empty", async () => {
    const shown = JSON.parse(formatEffectiveConfig(await loadConfig({ env: {} }))) as {
      redis: { password: string; url: string };
    };
    expect(shown.redis).toMatchObject({ password: "", url: "redis://127.0.0.1:6379" });
  });
});

describe("maskRedisUrl", () => {
  it.each([
    ["redis://127.0.0.1:6379", "redis://127.0.0.1:6379"],
    ["redis://user:pw@host:6379", "redis://user:***@host:6379"],
    ["redis://:pw@host", "redis://:***@host"],
    ["redis://token@host", "redis://***@host"],
    ["redis://user:p@ss/w@rd@host/2", "redis://user:***@host/2"],
    ["redis://host:6379?password=pw&db=1", "redis://host:6379?password=***&db=1"],
  ])("%s -> %s", (url, masked) => {
    expect(maskRedisUrl(url)).toBe(masked);
  });
});
