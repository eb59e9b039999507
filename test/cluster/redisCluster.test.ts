import { describe, expect, it } from "vitest";
import { useRedisCluster } from "../support/redisCluster.js";

describe("test cluster", () => {
  const fixture = useRedisCluster();
  it("spreads keys over three masters", async () => {
    const { cluster } = fixture;
    const keys = cluster.keysOnEveryMaster("probe");
    const owners = await Promise.all(keys.map((key) => cluster.ownerOf(key)));
    expect(new Set(owners.map((o) => o.port)).size).toBe(3);
    const client = cluster.client();
    for (const key of keys) await client.set(key, "1");
    expect(await client.get(keys[2] ?? "")).toBe("1");
  });
});
