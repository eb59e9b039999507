import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/ConfigError.js";
import { validated } from "./configFiles.js";

describe("retention and reapConsumersIdleMs", () => {
  async function load(config: unknown) {
    return validated(config as object);
  }

  it("reads retention with defaults and reapConsumersIdleMs", async () => {
    const config = await load({
      groups: [{ stream: "orders", group: "billing", reapConsumersIdleMs: 86_400_000 }],
      retention: [
        { stream: "orders", maxLen: 1000 },
        { stream: "events", maxAgeMs: 60_000 },
      ],
    });
    expect(config.groups[0]?.reapConsumersIdleMs).toBe(86_400_000);
    expect(config.retention).toEqual([
      { stream: "orders", maxLen: 1000, maxAgeMs: 0 },
      { stream: "events", maxLen: 0, maxAgeMs: 60_000 },
    ]);
  });

  it.each([
    [{ retention: [{ maxLen: 1 }] }, "retention[0].stream"],
    [{ retention: [{ stream: "s", maxLen: -1 }] }, "retention[0].maxLen"],
    [{ retention: [{ stream: "s", maxAgeMs: 1.5 }] }, "retention[0].maxAgeMs"],
    [{ retention: [{ stream: "s", maxLen: 1, ttl: 3 }] }, "retention[0].ttl"],
    [{ retention: [{ stream: "s" }] }, "retention[0]"],
    [
      {
        retention: [
          { stream: "s", maxLen: 1 },
          { stream: "s", maxLen: 2 },
        ],
      },
      "retention[1].stream",
    ],
    [{ retention: { stream: "s" } }, "retention"],
    [{ retention: [{ stream: "stream-janitor:events", maxLen: 5 }] }, "retention[0].stream"],
    [
      { events: { stream: "audit" }, groups: [{ stream: "audit", group: "g" }] },
      "groups[0].stream",
    ],
    [
      { groups: [{ stream: "s", group: "g", reapConsumersIdleMs: -5 }] },
      "groups[0].reapConsumersIdleMs",
    ],
  ])("rejects %j naming %s", async (config, key) => {
    const error = await load(config).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).key).toBe(key);
  });
});
