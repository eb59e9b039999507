import { describe, expect, it } from "vitest";
import { applyFault, type NemesisTargets } from "./nemesis.js";
import type { Topology } from "./topology.js";

/**
 * Targets whose SLOWLOG collection before a kill takes `collectMs` of the clock (the host's, which
 * the fault's time is on), and whose Redis kill and failover record when they strike.
 */
function slowCollection(collectMs: number) {
  const struck: number[] = [];
  const collected: number[] = [];
  const topology = {
    name: "standalone",
    restart: () => {
      struck.push(Date.now());
      return Promise.resolve("ready after 1 ms");
    },
    failover: () => {
      struck.push(Date.now());
      return Promise.resolve("switched");
    },
  } as unknown as Topology;
  const targets = {
    topology,
    janitors: [],
    links: [],
    beforeRedisKill: async () => {
      // Waits on the clock itself, as the collection's round trips do: no timer, no sleep.
      const until = Date.now() + collectMs;
      while (Date.now() < until) await Promise.resolve();
      collected.push(Date.now());
    },
  } as unknown as NemesisTargets;
  return { struck, collected, targets };
}

describe("a Redis fault's time (the checker counts connection cuts from it)", () => {
  it.each(["kill-redis", "failover"] as const)(
    "%s is stamped when it strikes: after the SLOWLOG collection before it",
    async (kind) => {
      const { struck, collected, targets } = slowCollection(30);
      const applied = await applyFault({ atMs: 0, kind, target: 0, holdMs: 0 }, targets);
      // An entry produced and delivered during the collection had its reply cut by the kill: a
      // fault stamped before the collection made the checker count no cut for it
      // (miscounted-deliveries shipments:5971 in seed 31, 10 minutes, standalone).
      expect(struck).toHaveLength(1);
      expect(applied.at).toBeGreaterThanOrEqual(collected[0] ?? Infinity);
      expect(applied.at).toBeLessThanOrEqual(struck[0] ?? -Infinity);
    },
  );
});

describe("a connection cut that runs node after node", () => {
  it("client-kill's span ends after the last node's CLIENT KILL returned", async () => {
    const killedAt: number[] = [];
    // Each node's CLIENT KILL takes 5 ms of the clock, as on a loaded host with six nodes.
    const node = {
      call: async () => {
        const until = Date.now() + 5;
        while (Date.now() < until) await Promise.resolve();
        killedAt.push(Date.now());
        return 3;
      },
    };
    const topology = { name: "cluster", nodes: () => [node, node, node] } as unknown as Topology;
    const targets = { topology, janitors: [], links: [] } as unknown as NemesisTargets;
    const applied = await applyFault(
      { atMs: 0, kind: "client-kill", target: -1, holdMs: 0 },
      targets,
    );
    // An entry produced after the first node's kill was cut by a later node's (seed 41 on
    // Cluster, 10 minutes: miscounted-deliveries shipments:154, produced 5 ms after `at`).
    expect(killedAt).toHaveLength(3);
    expect(applied.at).toBeLessThanOrEqual(Math.min(...killedAt));
    expect(applied.until).toBeGreaterThanOrEqual(Math.max(...killedAt));
  });
});
