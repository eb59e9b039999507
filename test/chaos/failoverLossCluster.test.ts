import { describe, expect, it } from "vitest";
import type { History } from "./history.js";
import { ack, held, local, PRODUCED, redisHistory } from "./historyFixture.js";
import { judge, type JudgeInput } from "./judge.js";
import type { LocalRecord } from "./localHistory.js";
import type { AppliedFault } from "./nemesis.js";
import { takeoverOutcome } from "./failover.js";

/**
 * On Cluster, a record's drop is explained only by a loss of its own slot: the kill or failover
 * of the master serving it, or the slot's migration (README, "What the checker holds the janitor
 * to across a failover").
 */
// jobs (slot 9631) is served by the second master, orders (slot 105) by the first.
const ORDERS_MASTER = [[0, 5460]] as const;
const JOBS_MASTER = [[5461, 10922]] as const;
function clusterVerdict(
  history: History,
  records: LocalRecord[],
  faults: AppliedFault[],
  unrequested: JudgeInput["unrequested"] = [],
) {
  const verdict = judge({
    topology: "cluster",
    history,
    local: records,
    faults,
    switches: undefined,
    unrequested,
  });
  return {
    invariants: verdict.violations.map((v) => v.invariant),
    explained: verdict.lostByFailover.map((v) => v.detail),
    withoutSlots: verdict.counts.lossyFaultsWithoutSlots,
    unrequested: verdict.counts.unrequestedFailovers,
    droppedByUnrequested: verdict.counts.droppedByUnrequestedFailover,
  };
}
const kill = (at: number, slots?: readonly (readonly [number, number])[]): AppliedFault => ({
  atMs: at,
  kind: "kill-redis",
  target: -1,
  holdMs: 0,
  at,
  ...(slots === undefined ? {} : { slots }),
});

describe("the chaos checker on Cluster: a drop is tied to its slot's master", () => {
  it("an entry dropped with only another slot's master lost after it is a violation", () => {
    const records = [local("produced", PRODUCED, 1000, false)];
    const verdict = clusterVerdict(redisHistory(), records, [kill(2000, ORDERS_MASTER)]);
    expect(verdict.invariants).toEqual(["lost", "history-lost"]);
    expect(verdict.explained).toEqual([]);
  });

  it("an entry dropped with its own slot's master lost after it is lost-by-failover", () => {
    const records = [local("produced", PRODUCED, 1000, false)];
    const faults = [kill(2000, ORDERS_MASTER), kill(3000, JOBS_MASTER)];
    const verdict = clusterVerdict(redisHistory(), records, faults);
    expect(verdict.invariants).toEqual([]);
    expect(verdict.explained).toEqual([
      expect.stringMatching(/the entry itself.*failover at 3000/u),
    ]);
    expect(verdict.withoutSlots).toBe(0);
  });

  it("an entry dropped before its own slot's migration is lost-by-failover, not before another's", () => {
    const records = [local("produced", PRODUCED, 1000, false)];
    const migrate = (slot: number): AppliedFault => ({
      ...kill(2000, [[slot, slot]]),
      kind: "migrate-slot",
    });
    expect(clusterVerdict(redisHistory(), records, [migrate(9631)]).invariants).toEqual([]);
    const other = clusterVerdict(redisHistory(), records, [migrate(105)]);
    expect(other.invariants).toEqual(["lost", "history-lost"]);
  });

  it("an ack dropped by another slot's failover, then the entry acknowledged again: acked-twice", () => {
    const history = redisHistory({ ...held, acks: [ack(1500), ack(5000, "workers-c1")] });
    const records = [local("acks", ack(1500), 1500, false)];
    const failover = { ...kill(2000, ORDERS_MASTER), kind: "failover" as const };
    expect(clusterVerdict(history, records, [failover]).invariants).toEqual(["acked-twice"]);
    const own = { ...failover, slots: JOBS_MASTER };
    expect(clusterVerdict(history, records, [own]).invariants).toEqual([]);
  });
});

describe("the chaos checker on Cluster: confirmations, and histories without slots", () => {
  it("a confirmed entry gone is confirmed-write-lost, whatever master was lost", () => {
    const records = [local("produced", PRODUCED, 1000, true)];
    const verdict = clusterVerdict(redisHistory(), records, [kill(2000, JOBS_MASTER)]);
    expect(verdict.invariants).toEqual(["lost", "confirmed-write-lost"]);
  });

  it("a confirmed entry its slot's migration moved, then lost with its new master: lost-by-failover", () => {
    // The migration rewrote it on another master, whose replica nobody asked.
    const records = [local("produced", PRODUCED, 1000, true)];
    const migrate: AppliedFault = { ...kill(2000, [[9631, 9631]]), kind: "migrate-slot" };
    const faults = [migrate, kill(3000, JOBS_MASTER)];
    expect(clusterVerdict(redisHistory(), records, faults).invariants).toEqual([]);
    const other: AppliedFault = { ...migrate, slots: [[105, 105]] };
    const kept = clusterVerdict(redisHistory(), records, [other, kill(3000, JOBS_MASTER)]);
    expect(kept.invariants).toEqual(["lost", "confirmed-write-lost"]);
  });

  it("a fault with no slots (an older history) still explains any slot's drop, and is counted", () => {
    const records = [local("produced", PRODUCED, 1000, false)];
    const verdict = clusterVerdict(redisHistory(), records, [kill(2000)]);
    expect(verdict.invariants).toEqual([]);
    expect(verdict.withoutSlots).toBe(1);
  });
});

describe("the chaos checker on Cluster: a failover the Cluster made alone (no fault of the nemesis)", () => {
  it("an unconfirmed entry dropped around it, of its slots, is lost-by-failover, counted as its", () => {
    const records = [local("produced", PRODUCED, 1000, false)];
    const verdict = clusterVerdict(redisHistory(), records, [], [{ at: 3000, slots: JOBS_MASTER }]);
    expect(verdict.invariants).toEqual([]);
    expect(verdict.explained).toEqual([
      expect.stringMatching(/the entry itself.*failover at 3000/u),
    ]);
    expect([verdict.unrequested, verdict.droppedByUnrequested]).toEqual([1, 1]);
  });

  it("a confirmed entry gone across it is confirmed-write-lost; another slot's explains nothing", () => {
    const confirmed = [local("produced", PRODUCED, 1000, true)];
    const own = [{ at: 3000, slots: JOBS_MASTER }];
    const verdict = clusterVerdict(redisHistory(), confirmed, [], own);
    expect(verdict.invariants).toEqual(["lost", "confirmed-write-lost"]);
    expect(verdict.droppedByUnrequested).toBe(0);
    const unconfirmed = [local("produced", PRODUCED, 1000, false)];
    const other = clusterVerdict(
      redisHistory(),
      unconfirmed,
      [],
      [{ at: 3000, slots: ORDERS_MASTER }],
    );
    expect(other.invariants).toEqual(["lost", "history-lost"]);
  });
});

describe("the chaos checker on Cluster: a failover fault whose replica took over only after its wait", () => {
  it("explains a record dropped between the fault and the takeover by the takeover alone", () => {
    // As the fault recorded it (record() in nemesis.ts copies its outcome onto it).
    const asked = { stream: "jobs", master: 7001, replica: 7004, slots: JOBS_MASTER };
    const fault: AppliedFault = {
      ...kill(2000),
      kind: "failover",
      ...takeoverOutcome(asked, "no", 20_000),
    };
    // Acknowledged after the fault's time, then gone with the takeover the watcher saw at 9000.
    const records = [local("produced", PRODUCED, 3000, false)];
    const late = [{ at: 9000, slots: JOBS_MASTER }];
    const verdict = clusterVerdict(redisHistory(), records, [fault], late);
    expect(verdict.invariants).toEqual([]);
    expect(verdict.explained).toEqual([
      expect.stringMatching(/the entry itself.*failover at 9000/u),
    ]);
    expect([verdict.unrequested, verdict.droppedByUnrequested]).toEqual([1, 1]);
  });
});

describe("the chaos checker and a connection cut that spans node after node", () => {
  const KEY_SHIPPED = "shipments:1";
  // Dead-lettered by the dead-letter action (couriers) after one delivery no consumer recorded:
  // its reply was lost to a CLIENT KILL that began 10 ms before the entry was produced.
  const history = redisHistory({
    produced: { [KEY_SHIPPED]: "shipments 1000-0" },
    sourceBodies: { [KEY_SHIPPED]: "body=00" },
    deadLetters: [
      {
        stream: "{shipments}:dead",
        id: "1200-0",
        key: KEY_SHIPPED,
        group: "couriers",
        reason: "action",
        deliveries: 1,
        at: 1200,
        body: "body=00",
      },
    ],
  });
  const records = [local("produced", `${KEY_SHIPPED} shipments 1000-0`, 1000, true)];
  const clientKill = (until?: number): AppliedFault => ({
    atMs: 990,
    kind: "client-kill",
    target: -1,
    holdMs: 0,
    at: 990,
    ...(until === undefined ? {} : { until }),
  });

  it("counts the cut for an entry produced while it ran (its last node's kill after it)", () => {
    expect(clusterVerdict(history, records, [clientKill(1010)]).invariants).toEqual([]);
  });

  it("does not count a cut that ended before the entry was produced", () => {
    expect(clusterVerdict(history, records, [clientKill(995)]).invariants).toEqual([
      "miscounted-deliveries",
    ]);
  });
});
