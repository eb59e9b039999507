import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keySlot } from "../../src/core/keySlot.js";
import { migrateSlot, migrationEnds, parseSelf, settlement } from "./clusterFaults.js";
import { ChaosCluster } from "./clusterNodes.js";
import { compareCopies } from "./busyKey.js";
import { keysByMaster, selfViews, serves } from "./clusterSelf.js";
import { SOURCE_STREAMS } from "./groups.js";
import { pollUntil } from "./quiescence.js";

const ID = (c: string) => c.repeat(40);

/** A CLUSTER NODES text as node `self` sees it: three masters, one replica. */
const NODES = [
  `${ID("a")} 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460 [105->-${ID("b")}]`,
  `${ID("b")} 127.0.0.1:7001@17001 master - 0 0 2 connected 5461-10922`,
  `${ID("c")} 127.0.0.1:7002@17002 master,fail - 0 0 3 connected 10923-16383`,
  `${ID("d")} 127.0.0.1:7003@17003 slave ${ID("a")} 0 0 1 connected`,
  "",
].join("\n");

describe("the chaos Cluster slot migration's pure logic", () => {
  it("reads a node's own line of CLUSTER NODES: role, slots, open slots", () => {
    expect(parseSelf(NODES)).toEqual({
      id: ID("a"),
      port: 7000,
      master: true,
      slots: [[0, 5460]],
      open: [105],
    });
    const replica = NODES.replace("myself,master", "master").replace(" slave", " myself,slave");
    expect(parseSelf(replica)).toMatchObject({ id: ID("d"), port: 7003, master: false });
    expect(parseSelf("")).toBeUndefined();
  });

  it("picks both ends among the masters that say so themselves, the slot's one owner first", () => {
    const a = { id: "a", port: 1, master: true, slots: [[0, 99]] as [number, number][], open: [] };
    const b = { ...a, id: "b", port: 2, slots: [[100, 199]] as [number, number][] };
    const c = { ...a, id: "c", port: 3, slots: [[200, 299]] as [number, number][] };
    const demoted = { ...a, id: "d", port: 4, master: false, slots: [] };
    expect(migrationEnds([a, b, demoted, c], 150, 0)).toEqual({ source: b, target: a });
    expect(migrationEnds([a, b, demoted, c], 150, 1)).toEqual({ source: b, target: c });
    // A restarted master still claiming its old slots: two owners, no migration.
    expect(migrationEnds([a, b, { ...c, slots: [[100, 299]] }], 150, 0)).toMatch(/2 masters/u);
    expect(migrationEnds([a, { ...b, open: [7] }, c], 150, 0)).toMatch(/open/u);
    expect(migrationEnds([b], 150, 0)).toMatch(/no other master/u);
  });

  it("finishes a failed migration once any of its keys reached the target, else undoes it", () => {
    expect(settlement(3)).toBe("finish");
    expect(settlement(0)).toBe("undo");
    // Some keys moved, some left on the source: finished (undoing it would strand the moved).
    expect(settlement(1)).toBe("finish");
  });
});

/** SETSLOT IMPORTING on another master and MIGRATING on the slot's owner, as a reshard begins. */
async function openMigration(cluster: ChaosCluster, slot: number) {
  const views = (await selfViews(cluster)).filter((view) => view.master);
  const source = views.find((view) => serves(view, slot));
  const target = views.find((view) => view !== source && view.slots.length > 0);
  const [from, into] = [source, target].map((view) => cluster.byPort(view?.port ?? 0)?.client);
  if (source === undefined || target === undefined || !from || !into) throw new Error("no ends");
  await into.call("CLUSTER", "SETSLOT", slot, "IMPORTING", source.id);
  await from.call("CLUSTER", "SETSLOT", slot, "MIGRATING", target.id);
  return { views, target, from, into };
}

// One real Cluster for the file (hooks at the top level, so each describe below is short).
let cluster: ChaosCluster;
beforeAll(async () => {
  cluster = await ChaosCluster.start();
}, 180_000);
afterAll(async () => {
  await cluster.stop();
});

describe("the chaos Cluster slot migration", () => {
  it("never leaves a slot open when MIGRATE fails (BUSYKEY: a key already at the target)", async () => {
    const stream = SOURCE_STREAMS[0] ?? "";
    const slot = keySlot(stream);
    expect(await pollUntil(() => cluster.stable(), 60_000)).toBe(true);
    const data = cluster.connect();
    await data.xadd(stream, "*", "n", "1");
    // The debris a failed migration left: the stream's key on every other master too. Each
    // node's own line says who is master now (a starved host may have failed one over).
    const views = await Promise.all(
      cluster.clients().map(async (admin) => ({
        admin,
        self: parseSelf(String(await admin.call("CLUSTER", "NODES"))),
      })),
    );
    const serves = ({ self }: (typeof views)[number]) =>
      self?.slots.some(([first, last]) => slot >= first && slot <= last) === true;
    const owner = views.find(serves)?.self;
    for (const { admin, self } of views.filter((v) => v.self?.master === true && !serves(v))) {
      if (self?.slots.length === 0) continue;
      await admin.call("CLUSTER", "SETSLOT", slot, "IMPORTING", owner?.id ?? "");
      await admin.pipeline().call("ASKING").xadd(stream, "*", "n", "debris").exec();
      await admin.call("CLUSTER", "SETSLOT", slot, "STABLE");
    }
    const { note } = await migrateSlot(cluster, 0);
    data.disconnect();
    expect(note).toMatch(/^failed: .*BUSYKEY.*undone/u);
    for (const admin of cluster.clients()) {
      expect(parseSelf(String(await admin.call("CLUSTER", "NODES")))?.open).toEqual([]);
    }
    expect(await cluster.owner(slot)).toBe(owner?.port);
  }, 180_000);
});

describe("the chaos Cluster slot migration left open", () => {
  it("finishes a migration left open after some of its keys moved: all on the target, closed everywhere", async () => {
    const stream = SOURCE_STREAMS[1] ?? "";
    const slot = keySlot(stream);
    expect(await pollUntil(() => cluster.stable(), 60_000)).toBe(true);
    const data = cluster.connect();
    const keys = [stream, ...["a", "b", "c"].map((name) => `{${stream}}:t41:${name}`)];
    for (const key of keys) await data.xadd(key, "*", "key", key);
    // A migration the harness left mid-way: both ends open, two keys moved, and one key on
    // both ends, the same copy (a source failed over before its DEL reached its replica).
    const { views, target, from, into } = await openMigration(cluster, slot);
    await from.call("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", ...keys.slice(0, 2));
    const copy = await from.dumpBuffer(keys[2] ?? "");
    await into
      .pipeline()
      .call("ASKING")
      .restore(keys[2] ?? "", 0, copy)
      .exec();

    const { note, slots } = await migrateSlot(cluster, 1);
    for (const admin of cluster.clients()) {
      expect(parseSelf(String(await admin.call("CLUSTER", "NODES")))?.open).toEqual([]);
    }
    const counts = await keysByMaster(cluster, slot);
    expect([...counts]).toEqual(views.map((v) => [v.port, v.port === target.port ? 4 : 0]));
    expect(await pollUntil(() => cluster.stable(), 60_000)).toBe(true);
    expect(await cluster.owner(slot)).toBe(target.port);
    for (const key of keys) expect(await data.xlen(key)).toBe(1);
    data.disconnect();
    expect(note).toMatch(/finished: .*BUSYKEY .*the same copy on both/u);
    expect(slots).toEqual([[slot, slot]]);
  }, 180_000);
});

describe("the chaos Cluster migration's BUSYKEY copies", () => {
  it("compares a key's two copies: the source's moves over an older one, never over a newer", async () => {
    const stream = SOURCE_STREAMS[2] ?? "";
    const slot = keySlot(stream);
    const [key, other] = [`{${stream}}:t41:busy`, `{${stream}}:t41:other`];
    const data = cluster.connect();
    await data.xadd(key, "1-1", "n", "1");
    await data.hset(other, "a", "1");
    const { from, into } = await openMigration(cluster, slot);
    const [copy, hash] = [await from.dumpBuffer(key), await from.dumpBuffer(other)];
    const restore = (name: string, value: Buffer) =>
      into.pipeline().call("ASKING").restore(name, 0, value).exec();
    await Promise.all([restore(key, copy), restore(other, hash)]);
    expect(await compareCopies(from, into, key)).toMatchObject({ replace: true });
    await from.xadd(key, "2-1", "n", "2");
    await from.hset(other, "b", "2");
    expect(await compareCopies(from, into, key)).toMatchObject({ replace: true });
    expect(await compareCopies(from, into, other)).toMatchObject({ replace: true });
    // The target's copy with an entry the source's lacks: neither is newer, both are kept.
    await into.pipeline().call("ASKING").xadd(key, "3-1", "n", "3").exec();
    await into.pipeline().call("ASKING").hset(other, "c", "3").exec();
    const verdicts = [await compareCopies(from, into, key), await compareCopies(from, into, other)];
    expect(verdicts).toMatchObject([{ replace: false }, { replace: false }]);
    const { note } = await migrateSlot(cluster, 2);
    data.disconnect();
    expect(note).toMatch(/HARNESS FAILURE: .*kept both/u);
  }, 180_000);
});
