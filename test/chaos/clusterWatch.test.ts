import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keySlot } from "../../src/core/keySlot.js";
import { waitFor } from "../support/waitFor.js";
import { failover, killMaster, migrateSlot, migrationEnds } from "./clusterFaults.js";
import { ChaosCluster } from "./clusterNodes.js";
import { selfViews, serves } from "./clusterSelf.js";
import { ClusterWatch } from "./clusterWatch.js";
import { SOURCE_STREAMS } from "./groups.js";
import { pollUntil } from "./quiescence.js";
import { nodeState } from "./slotHandover.js";

// One real Cluster for the file, watched from its start as a chaos run watches it; the slot
// watched as the lease's is the first stream's, so the nemesis's kill of its master (pick 0) hits it.
const LEASE_SLOT = keySlot(SOURCE_STREAMS[0] ?? "");
let cluster: ChaosCluster;
let watch: ClusterWatch | undefined;
const told: { down: boolean; at: number }[] = [];
beforeAll(async () => {
  cluster = await ChaosCluster.start();
  watch = await ClusterWatch.start(cluster.ports, { leaseSlot: LEASE_SLOT });
  watch.onDown((down, at) => told.push({ down, at }));
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

/** SIGSTOP or SIGCONT of a node's process. */
function signal(port: number, name: "SIGSTOP" | "SIGCONT"): void {
  const pid = cluster.byPort(port)?.server.process?.pid;
  if (pid === undefined) throw new Error(`no process on ${port}`);
  process.kill(pid, name);
}

// Last in the file: these take the lease's master away.
describe("the chaos Cluster watcher and the lease's master", () => {
  it("does not take the nemesis's CLIENT KILL of its own connections for the lease's master refusing", async () => {
    expect(await pollUntil(() => cluster.stable(), 60_000)).toBe(true);
    const spans = watch?.down.spans.length ?? 0;
    for (let round = 0; round < 3; round += 1) {
      // The client-kill fault's command on every node; the look right after meets its cut.
      const kill = ["KILL", "TYPE", "normal", "SKIPME", "yes"];
      await Promise.all(cluster.clients().map((client) => client.call("CLIENT", ...kill)));
      await watch?.look();
    }
    expect(watch?.down.spans).toHaveLength(spans);
  }, 60_000);

  it("records the Cluster down while the lease's master, cut off from the other masters, answers CLUSTERDOWN", async () => {
    expect(await pollUntil(() => cluster.stable(), 60_000)).toBe(true);
    const views = await selfViews(cluster);
    const masters = views.filter((view) => view.master && view.slots.length > 0);
    const others = masters.filter((view) => !serves(view, LEASE_SLOT));
    expect(others).toHaveLength(2);
    const [spans, heard] = [watch?.down.spans.length ?? 0, told.length];
    const stopped = Date.now();
    // As on a starved host: the lease's master hears from no other master past the node timeout.
    for (const other of others) signal(other.port, "SIGSTOP");
    try {
      const down = () => (watch?.down.spans.length ?? 0) > spans;
      await waitFor(down, { timeoutMs: 30_000, what: "the lease's master refusing" });
      const lease = masters.find((view) => serves(view, LEASE_SLOT));
      const info = await cluster.byPort(lease?.port ?? -1)?.client.call("CLUSTER", "INFO");
      expect(String(info)).toContain("cluster_state:fail");
    } finally {
      for (const other of others) signal(other.port, "SIGCONT");
    }
    const continued = Date.now();
    const up = () => watch?.down.spans[spans]?.up !== undefined;
    await waitFor(up, { timeoutMs: 30_000, what: "the lease's master serving again" });
    const span = watch?.down.spans[spans];
    expect(watch?.down.spans).toHaveLength(spans + 1);
    expect(span?.down).toBeGreaterThanOrEqual(stopped);
    expect(span?.down).toBeLessThanOrEqual(continued);
    expect(span?.up).toBeGreaterThanOrEqual(continued);
    expect(told.slice(heard)).toEqual([
      { down: true, at: span?.down },
      { down: false, at: span?.up },
    ]);
  }, 90_000);

  it("records the Cluster down from the kill of the lease's master until its replica serves the slot", async () => {
    expect(await pollUntil(() => cluster.stable(), 60_000)).toBe(true);
    const spans = watch?.down.spans.length ?? 0;
    const before = Date.now();
    const outcome = await watch?.requested(() => killMaster(cluster, 0));
    expect(outcome?.note).toMatch(/promoted after/u);
    const span = watch?.down.spans[spans];
    expect(watch?.down.spans).toHaveLength(spans + 1);
    expect(span?.down).toBeGreaterThanOrEqual(outcome?.at ?? before);
    // Up once the replica's own line claims the slot: before the killed master is back.
    expect(span?.up).toBeGreaterThan(span?.down ?? Infinity);
    expect(span?.up).toBeLessThanOrEqual(Date.now());
  }, 180_000);
});
