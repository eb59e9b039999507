import { describe, expect, it } from "vitest";
import { masterOfSlot, refusesCommands } from "./clusterDown.js";
import { DownSpans } from "./downSpans.js";
import type { NodeState } from "./slotHandover.js";

const node = (
  id: string,
  master: boolean,
  slots: [number, number][],
  epoch: number,
): NodeState => ({
  id,
  port: 7000 + Number(id.slice(1)),
  master,
  slots,
  epoch,
});

/** When the Cluster is down for the janitors: the lease's master refuses commands (pure logic). */
describe("the Cluster down for the janitors", () => {
  it("sends the lease to the master of its slot with the highest epoch, never to a replica", () => {
    const states = new Map(
      [
        node("n1", true, [[0, 5460]], 1),
        node("n2", true, [[5461, 10922]], 2),
        // n2 killed before its replica's promotion is seen: both claim the slots, the newer wins.
        node("n4", true, [[5461, 10922]], 7),
        node("n5", false, [], 7),
      ].map((state) => [state.id, state]),
    );
    expect(masterOfSlot(states, 100)?.id).toBe("n1");
    expect(masterOfSlot(states, 6000)?.id).toBe("n4");
    expect(masterOfSlot(states, 16000)).toBeUndefined();
  });

  it("reads a refusal from cluster_state or a refused connection, nothing from another failure", () => {
    expect(refusesCommands("cluster_enabled:1\r\ncluster_state:fail\r\n")).toBe(true);
    expect(refusesCommands("cluster_state:ok\r\ncluster_slots_assigned:16384\r\n")).toBe(false);
    const closed = new Error("Stream isn't writeable and enableOfflineQueue options is false");
    // Killed: a new connection is refused.
    expect(refusesCommands(closed, true)).toBe(true);
    // The watcher's own connection cut (CLIENT KILL), or a timeout: the node still takes new ones.
    expect(refusesCommands(closed, false)).toBeUndefined();
    expect(refusesCommands(new Error("Command timed out"))).toBeUndefined();
    expect(refusesCommands("")).toBeUndefined();
  });

  it("opens a span when the master refuses and closes it when it serves again, telling each change once", () => {
    const down = new DownSpans();
    const told: [boolean, number][] = [];
    down.onChange((isDown, at) => told.push([isDown, at]));
    down.observe(false, 1);
    down.observe(true, 10);
    down.observe(undefined, 12); // a timeout: still down
    down.observe(true, 14);
    down.observe(false, 20);
    down.observe(true, 30);
    expect(down.spans).toEqual([
      { down: 10, up: 20 },
      { down: 30, up: undefined },
    ]);
    expect(told).toEqual([
      [true, 10],
      [false, 20],
      [true, 30],
    ]);
  });
});
