import { describe, expect, it } from "vitest";
import { GroupSet, type GroupChange } from "../../src/core/GroupSet.js";
import { groupConfig } from "../support/sweepHarness.js";

describe("GroupSet", () => {
  it("tells subscribers what was added, removed and updated, and stays quiet when nothing changed", () => {
    const a = groupConfig("a");
    const b = groupConfig("b");
    const set = new GroupSet([a, b]);
    const changes: GroupChange[] = [];
    set.on("change", (change) => changes.push(change));

    expect(set.replace([groupConfig("a"), groupConfig("b")])).toBeUndefined();
    const c = groupConfig("c");
    const slowerA = groupConfig("a", { minIdleMs: 5000 });
    set.replace([slowerA, c]);
    expect(changes).toHaveLength(1);
    expect(changes[0]?.added.map((g) => g.id)).toEqual(["c/workers"]);
    expect(changes[0]?.removed.map((g) => g.id)).toEqual(["b/workers"]);
    expect(changes[0]?.updated.map((g) => g.id)).toEqual(["a/workers"]);
    expect(set.current()).toEqual([slowerA, c]);
  });

  it("compares backoffMs by value: the same list read again is no change, another list is", () => {
    const set = new GroupSet([groupConfig("a", { backoffMs: [1000, 5000] })]);
    expect(set.replace([groupConfig("a", { backoffMs: [1000, 5000] })])).toBeUndefined();
    const changes: GroupChange[] = [];
    set.on("change", (change) => changes.push(change));
    set.replace([groupConfig("a", { backoffMs: [1000, 6000] })]);
    expect(changes[0]?.updated.map((g) => g.id)).toEqual(["a/workers"]);
  });
});
