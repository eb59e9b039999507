import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/ConfigError.js";
import type { GroupConfig } from "../../src/core/configTypes.js";
import { hashTag, keySlot, sameSlotKey } from "../../src/core/keySlot.js";
import { defaultDeadLetterStream } from "../../src/core/resolveGroup.js";
import { slotViolations } from "../../src/core/slotRule.js";
import { clusterSlotProblems } from "../../src/config/clusterSlotProblems.js";
import { startRedis, type RedisServer } from "../support/redisServer.js";

/** Names whose braces sit in every odd place Redis' hash-tag rule distinguishes. */
const ODD_NAMES = [
  "orders",
  "",
  "{orders}:dead",
  "{}",
  "{}orders",
  "{}{orders}",
  "a{}b{c}",
  "{a}{b}",
  "a{b",
  "a}b",
  "}{a}",
  "{{a}}",
  "{a{b}c}",
  "x{y}z",
  "{",
  "}",
  "}{",
  "{ab}}",
  "a{b}}c",
  "{ }",
  "tenant:{42}:events",
  "é{ü}ß",
  "日本{語}",
  "{orders",
  "orders}",
];

async function serverSlot(redis: Redis, key: string): Promise<number> {
  return Number(await redis.call("CLUSTER", "KEYSLOT", key));
}

function group(stream: string, overrides: Partial<GroupConfig> = {}): GroupConfig {
  return {
    stream,
    group: "g",
    minIdleMs: 1000,
    maxDeliveries: 5,
    action: "requeue",
    requeueStream: "",
    deadLetterStream: "",
    deadLetterMaxLen: 1000,
    ...overrides,
  };
}

describe("hash slots, as Redis computes them", () => {
  let server: RedisServer;
  let redis: Redis;
  beforeAll(async () => {
    // CLUSTER KEYSLOT needs cluster mode, not a whole cluster: one node without slots answers it.
    server = await startRedis(["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]);
    redis = server.client();
  });
  afterAll(async () => {
    await server.stop();
  });

  it("keySlot agrees with CLUSTER KEYSLOT on names with braces in odd places", async () => {
    for (const name of ODD_NAMES) {
      expect({ name, slot: keySlot(name) }).toEqual({ name, slot: await serverSlot(redis, name) });
    }
  });

  it("sameSlotKey and the default dead-letter stream share the slot of every odd name", async () => {
    for (const name of ODD_NAMES) {
      const slot = await serverSlot(redis, name);
      const companion = sameSlotKey(name, "fence");
      expect({ name, companion, slot: await serverSlot(redis, companion) }).toEqual({
        name,
        companion,
        slot,
      });
      // Stream names are never empty (config); a stray `}` is the slot rule's case below.
      if (name !== "" && (hashTag(name) !== undefined || !name.includes("}")))
        expect(await serverSlot(redis, defaultDeadLetterStream(name))).toBe(slot);
    }
    expect(sameSlotKey("orders", "retry")).toBe("{orders}:retry");
    expect(sameSlotKey("{t}.orders", "retry")).toBe("{t}.orders:retry");
  });

  it("slotViolations names keys outside the stream's slot with a name that works", async () => {
    expect(slotViolations(group("orders"))).toEqual([]);
    expect(slotViolations(group("orders", { requeueStream: "{orders}:retry" }))).toEqual([]);
    const [violation, ...rest] = slotViolations(group("orders", { requeueStream: "orders:retry" }));
    expect(rest).toEqual([]);
    expect(violation).toEqual({
      setting: "requeueStream",
      key: "orders:retry",
      slot: await serverSlot(redis, "orders:retry"),
      suggestion: "{orders}:retry",
    });
    // A stray `}` defeats the default dead-letter name; the suggestion still shares the slot.
    const [odd] = slotViolations(group("a}b"));
    expect(odd?.setting).toBe("deadLetterStream");
    expect(await serverSlot(redis, odd?.suggestion ?? "")).toBe(await serverSlot(redis, "a}b"));
  });

  it("clusterSlotProblems refuses with the key, both slots and a name that works", () => {
    const groups = [group("ok"), group("orders", { deadLetterStream: "orders-dead" })];
    const [refusal, ...others] = clusterSlotProblems(groups);
    expect(others).toEqual([]);
    expect(refusal).toBeInstanceOf(ConfigError);
    const message = refusal?.message ?? "";
    expect(message).toContain('groups[1].deadLetterStream = "orders-dead"');
    expect(message).toContain(`slot ${keySlot("orders")}`);
    expect(message).toContain(`slot ${keySlot("orders-dead")}`);
    expect(message).toContain('"{orders}:dead"');
    expect(
      clusterSlotProblems([group("orders"), group("{t}x", { requeueStream: "{t}y" })]),
    ).toEqual([]);
  });
});
