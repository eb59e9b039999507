import { describe, expect, it } from "vitest";
import { diffSlotMaps, nodeState, slotRanges, type NodeState } from "./slotHandover.js";

const ID = (c: string) => c.repeat(40);

/** Three masters a, b, c and d, a's replica, as each says of itself. */
function cluster(changes: Partial<Record<string, Partial<NodeState>>> = {}) {
  const base: NodeState[] = [
    { id: ID("a"), port: 7000, master: true, slots: [[0, 5460]], epoch: 1 },
    { id: ID("b"), port: 7001, master: true, slots: [[5461, 10922]], epoch: 2 },
    { id: ID("c"), port: 7002, master: true, slots: [[10923, 16383]], epoch: 3 },
    { id: ID("d"), port: 7003, master: false, replicaOf: ID("a"), slots: [], epoch: 1 },
  ];
  return new Map(base.map((node) => [node.id, { ...node, ...changes[node.id[0] ?? ""] }]));
}

describe("the chaos Cluster watcher's slot map diff", () => {
  it("reads a node's own line with its config epoch", () => {
    const text = [
      `${ID("b")} 127.0.0.1:7001@17001 master - 0 0 2 connected 5461-10922`,
      `${ID("d")} 127.0.0.1:7003@17003 myself,slave ${ID("a")} 0 0 7 connected`,
    ].join("\n");
    expect(nodeState(text)).toEqual({
      id: ID("d"),
      port: 7003,
      master: false,
      replicaOf: ID("a"),
      slots: [],
      epoch: 7,
    });
    expect(nodeState("")).toBeUndefined();
  });

  it("a replica that now masters its old master's slots is a failover, not a migration", () => {
    const after = cluster({
      a: { master: false, replicaOf: ID("d"), slots: [] },
      d: { master: true, slots: [[0, 5460]], epoch: 4 },
    });
    expect(diffSlotMaps(cluster(), after)).toEqual({
      failovers: [
        {
          slots: [[0, 5460]],
          from: { id: ID("a"), port: 7000 },
          to: { id: ID("d"), port: 7003 },
          epoch: 4,
        },
      ],
      migrations: [],
    });
  });

  it("the old master not answering yet (stalled, killed) does not hide its replica's promotion", () => {
    const after = cluster({ d: { master: true, slots: [[0, 5460]], epoch: 4 } });
    expect(diffSlotMaps(cluster(), after).failovers).toMatchObject([{ from: { port: 7000 } }]);
  });
});

describe("the chaos Cluster watcher's slot map diff of migrations and the rest", () => {
  it("a slot moved between two masters, with the target's epoch bumped, is a migration only", () => {
    const after = cluster({
      a: {
        slots: [
          [0, 104],
          [106, 5460],
        ],
      },
      b: {
        slots: [
          [105, 105],
          [5461, 10922],
        ],
        epoch: 4,
      },
    });
    expect(diffSlotMaps(cluster(), after)).toEqual({
      failovers: [],
      migrations: [
        {
          slots: [[105, 105]],
          from: { id: ID("a"), port: 7000 },
          to: { id: ID("b"), port: 7001 },
          epoch: 4,
        },
      ],
    });
  });

  it("nothing changed, a demotion, or a node not seen before: neither", () => {
    expect(diffSlotMaps(cluster(), cluster())).toEqual({ failovers: [], migrations: [] });
    const demoted = cluster({ a: { master: false, replicaOf: ID("d"), slots: [] } });
    expect(diffSlotMaps(cluster(), demoted)).toEqual({ failovers: [], migrations: [] });
    // A node first seen is no change of hands: the watcher knew nothing of it before.
    const first = new Map([...cluster()].filter(([id]) => id !== ID("d")));
    const promoted = cluster({ d: { master: true, slots: [[0, 5460]] } });
    expect(diffSlotMaps(first, promoted).failovers).toEqual([]);
  });

  it("writes slots as inclusive ranges", () => {
    expect(slotRanges([5, 3, 4, 9, 11, 10])).toEqual([
      [3, 5],
      [9, 11],
    ]);
  });
});
