import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keySlot } from "../../src/core/keySlot.js";
import { migrateSlot, migrationEnds, parseSelf, settlement } from "./clusterFaults.js";
import { ChaosCluster } from "./clusterNodes.js";
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

  it("gives a failed migration's slot to the end that holds its keys", () => {
    expect(settlement(0, 3)).toBe("finish");
    expect(settlement(3, 0)).toBe("undo");
    expect(settlement(0, 0)).toBe("undo");
    expect(settlement(2, 1)).toBe("undo");
  });
});

describe("the chaos Cluster slot migration", () => {
  let cluster: ChaosCluster;
  beforeAll(async () => {
    cluster = await ChaosCluster.start();
  }, 180_000);
  afterAll(async () => {
    await cluster.stop();
  });

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
    const note = await migrateSlot(cluster, 0);
    data.disconnect();
    expect(note).toMatch(/^failed: .*BUSYKEY.*undone/u);
    for (const admin of cluster.clients()) {
      expect(parseSelf(String(await admin.call("CLUSTER", "NODES")))?.open).toEqual([]);
    }
    expect(await cluster.owner(slot)).toBe(owner?.port);
  }, 180_000);
});
