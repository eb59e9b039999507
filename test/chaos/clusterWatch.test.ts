import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keySlot } from "../../src/core/keySlot.js";
import { waitFor } from "../support/waitFor.js";
import { failover, migrateSlot, migrationEnds } from "./clusterFaults.js";
import { ChaosCluster } from "./clusterNodes.js";
import { selfViews } from "./clusterSelf.js";
import { ClusterWatch } from "./clusterWatch.js";
import { SOURCE_STREAMS } from "./groups.js";
import { pollUntil } from "./quiescence.js";
import { nodeState } from "./slotHandover.js";

// One real Cluster for the file, watched from its start as a chaos run watches it.
let cluster: ChaosCluster;
let watch: ClusterWatch | undefined;
beforeAll(async () => {
  cluster = await ChaosCluster.start();
  watch = await ClusterWatch.start(cluster.ports);
}, 180_000);
afterAll(async () => {
  await watch?.stop();
  await cluster.stop();
});

/** Every node's config epoch now, by port. */
async function epochs(): Promise<Map<number, number>> {
  const texts = await Promise.all(cluster.clients().map((c) => c.call("CLUSTER", "NODES")));
  const states = texts.flatMap((text) => nodeState(String(text)) ?? []);
  return new Map(states.map((state) => [state.port, state.epoch]));
}

/**
 * Every node knows `replica` as `master`'s replica. Right after the Cluster forms some may not yet
 * (gossip): the master then ignores the replica's manual failover, the others deny it their vote.
 */
async function knownAsReplica(replica: string, master: string): Promise<boolean> {
  const texts = await Promise.all(cluster.clients().map((c) => c.call("CLUSTER", "NODES")));
  return texts.every((text) =>
    String(text)
      .split("\n")
      .some((line) => line.startsWith(`${replica} `) && line.split(" ")[3] === master),
  );
}

/** A migration (the nemesis's) whose target is not `promoted`, the holder of the highest epoch. */
async function migrationAwayFrom(promoted: number) {
  const views = await selfViews(cluster);
  for (let pick = 0; pick < SOURCE_STREAMS.length * 3; pick += 1) {
    const slot = keySlot(SOURCE_STREAMS[pick % SOURCE_STREAMS.length] ?? "");
    const ends = migrationEnds(views, slot, Math.floor(pick / 3));
    if (typeof ends !== "string" && ends.target.port !== promoted) return { pick, slot, ends };
  }
  throw new Error("no migration to a master other than the promoted one");
}

describe("the chaos Cluster watcher", () => {
  it("records a failover the nemesis never asked for with its slots and masters, and a migration as none", async () => {
    expect(await pollUntil(() => cluster.stable(), 60_000)).toBe(true);
    const views = await selfViews(cluster);
    const master = views.find((view) => view.master && view.slots.length > 0);
    const replica = views.find((view) => view.replicaOf === master?.id);
    if (master === undefined || replica === undefined) throw new Error("no master with a replica");
    expect(await pollUntil(() => knownAsReplica(replica.id, master.id), 30_000)).toBe(true);
    const requested = Date.now();
    // Sent straight to the replica: no fault of the nemesis, as a Cluster's own failover.
    await cluster.byPort(replica.port)?.client.call("CLUSTER", "FAILOVER");
    await waitFor(() => watch?.failovers.length === 1, { timeoutMs: 30_000, what: "a failover" });
    expect(watch?.failovers).toEqual([
      {
        slots: master.slots,
        from: { id: master.id, port: master.port },
        to: { id: replica.id, port: replica.port },
        epoch: expect.any(Number) as number,
        at: expect.any(Number) as number,
        cause: "self",
      },
    ]);
    expect(watch?.failovers[0]?.at).toBeGreaterThanOrEqual(requested);
    expect(watch?.migrations).toEqual([]);

    // A slot migration bumps its target's config epoch past every other, as the promotion did:
    // the epoch alone would call it a failover; the watcher does not.
    expect(await pollUntil(() => cluster.stable(), 60_000)).toBe(true);
    const { pick, slot, ends } = await migrationAwayFrom(replica.port);
    const highest = Math.max(...(await epochs()).values());
    const { note } = await migrateSlot(cluster, pick);
    expect(note).not.toMatch(/failed|interrupted/u);
    await watch?.look();
    expect(watch?.migrations).toEqual([
      {
        slots: [[slot, slot]],
        from: { id: ends.source.id, port: ends.source.port },
        to: { id: ends.target.id, port: ends.target.port },
        epoch: expect.any(Number) as number,
        at: expect.any(Number) as number,
      },
    ]);
    expect(watch?.migrations[0]?.epoch).toBeGreaterThan(highest);
    expect(watch?.failovers).toHaveLength(1);
  }, 120_000);
});

describe("the chaos Cluster watcher and the nemesis", () => {
  it("tags a failover of the nemesis's own (its fault run through the watcher) as the nemesis's", async () => {
    expect(await pollUntil(() => cluster.stable(), 60_000)).toBe(true);
    const views = await selfViews(cluster);
    const known = views.filter((view) => view.replicaOf !== undefined);
    const everyReplicaKnown = async () => {
      for (const view of known)
        if (!(await knownAsReplica(view.id, view.replicaOf ?? ""))) return false;
      return true;
    };
    expect(await pollUntil(everyReplicaKnown, 30_000)).toBe(true);
    const seen = watch?.failovers.length ?? 0;
    const outcome = await watch?.requested(() => failover(cluster, 2));
    expect(outcome?.note).toMatch(/took over from/u);
    expect(watch?.failovers.slice(seen)).toMatchObject([
      { slots: outcome?.slots, cause: "nemesis" },
    ]);
    expect(watch?.failovers[0]?.cause).toBe("self");
  }, 60_000);
});
