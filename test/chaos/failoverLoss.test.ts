import { describe, expect, it } from "vitest";
import type { DeadLetter, History } from "./history.js";
import { ack, delivery, held, KEY, local, PRODUCED, redisHistory } from "./historyFixture.js";
import { judge } from "./judge.js";
import { parseLocalLog, localLine, type LocalRecord } from "./localHistory.js";
import { settleFaults, type AppliedFault } from "./nemesis.js";
import { NOT_ANNOUNCED } from "./topology.js";

/** Dead-lettered after 5 deliveries, each a crash: neither miscounted nor collateral. */
const fiveCrashes = {
  deliveries: [1, 2, 3, 4, 5].map((n) => delivery(1000 + n)),
  stalls: [1, 2, 3, 4].map((n) => `${KEY} workers ${1000 + n} crash`),
};

function letter(at: number): DeadLetter {
  const fields = { stream: "{jobs}:dead", id: `${at}-0`, key: KEY, group: "workers" };
  return { ...fields, reason: "max-deliveries", deliveries: 5, at, body: "body=00" };
}

function verdictOf(
  history: History,
  records: LocalRecord[],
  switches: number[] | undefined = [2000],
) {
  const verdict = judge({ topology: "sentinel", history, local: records, faults: [], switches });
  return {
    invariants: verdict.violations.map((v) => v.invariant),
    explained: verdict.lostByFailover.map((v) => v.detail),
  };
}

describe("the chaos checker across failovers", () => {
  it("an entry Redis answered, unconfirmed, then dropped at a failover is lost-by-failover, not lost", () => {
    const verdict = verdictOf(redisHistory(), [local("produced", PRODUCED, 1000, false)]);
    expect(verdict.invariants).toEqual([]);
    expect(verdict.explained).toEqual([
      expect.stringMatching(
        /workers: the entry itself: produced "jobs:1 jobs 1000-0".*failover at 2000/u,
      ),
    ]);
  });

  it("an entry gone with no failover after it, or gone though its replica confirmed it, is a violation", () => {
    const late = verdictOf(redisHistory(), [local("produced", PRODUCED, 9000, false)]);
    expect(late.invariants).toEqual(["lost", "history-lost"]);
    const confirmed = verdictOf(redisHistory(), [local("produced", PRODUCED, 1000, true)]);
    expect(confirmed.invariants).toEqual(["lost", "confirmed-write-lost"]);
  });

  it("an ack a failover dropped, then the entry acknowledged again: explained, not acked-twice", () => {
    const history = redisHistory({ ...held, acks: [ack(5000, "workers-c1")] });
    const records = [
      local("produced", PRODUCED, 1000, true),
      local("acks", ack(1500), 1500, false),
      local("acks", ack(5000, "workers-c1"), 5000, true),
    ];
    const verdict = verdictOf(history, records);
    expect(verdict.invariants).toEqual([]);
    expect(verdict.explained).toEqual([expect.stringMatching(/workers: done again: acks/u)]);
    // The first one confirmed by the replica: no failover undoes it, the duplicate is one.
    const both = redisHistory({ ...held, acks: [ack(1500), ack(5000, "workers-c1")] });
    const confirmed = [local("acks", ack(1500), 1500, true), ...records.slice(2)];
    expect(verdictOf(both, confirmed).invariants).toEqual(["acked-twice"]);
    // No failover between them: a duplicate, confirmed or not.
    expect(verdictOf(both, records, [9000]).invariants).toEqual(["acked-twice"]);
  });

  it("seed 32: an unconfirmed ack Redis holds at the end, then a later one a failover dropped: explained", () => {
    // The replica was promoted before its resync from the new primary ended: it brought back the
    // old primary's writes (the first ack) and lost the new primary's (the second).
    const history = redisHistory({ ...held, acks: [ack(1500)] });
    const records = [
      local("acks", ack(1500), 1500, false),
      local("acks", ack(4000, "workers-c1"), 4000, false),
    ];
    const verdict = verdictOf(history, records, [1600, 6000]);
    expect(verdict.invariants).toEqual([]);
    expect(verdict.explained).toEqual([
      expect.stringMatching(/done again: acks .* at 1500, unconfirmed, a failover at 1600/u),
    ]);
  });

  it("an ack dropped, then the entry dead-lettered: explained, not acked-and-dead-lettered", () => {
    const history = redisHistory({ ...held, ...fiveCrashes, deadLetters: [letter(6000)] });
    const verdict = verdictOf(history, [local("acks", ack(1500), 1500, false)]);
    expect(verdict.invariants).toEqual([]);
    expect(verdict.explained).toEqual([expect.stringMatching(/workers: done again: acks/u)]);
  });

  it("a duplicate after a held ack is no failover's doing, even when the later ack was dropped", () => {
    const history = redisHistory({ ...held, acks: [ack(1000)] });
    const verdict = verdictOf(history, [local("acks", ack(1800, "workers-c1"), 1800, false)]);
    expect(verdict.invariants).toEqual(["acked-twice"]);
  });

  it("an entry still held whose only ack was dropped must be processed again: lost", () => {
    const history = redisHistory({ ...held });
    const verdict = verdictOf(history, [local("acks", ack(1500), 1500, false)]);
    expect(verdict.invariants).toEqual(["lost"]);
  });

  it("a purge a failover dropped, then the entry dead-lettered again: not purged-yet-kept", () => {
    const purge = `${KEY} workers 1400-0 1600`;
    const history = redisHistory({ ...held, ...fiveCrashes, deadLetters: [letter(7000)] });
    const verdict = verdictOf(history, [local("purged", purge, 1600, false)]);
    expect(verdict.invariants).toEqual([]);
    expect(verdict.explained).toEqual([expect.stringMatching(/done again: purged/u)]);
  });

  it("an ack of an entry whose producer record Redis dropped is not unknown-entry", () => {
    const history = redisHistory({ acks: [ack(1500)] });
    const verdict = verdictOf(history, [local("produced", PRODUCED, 1000, false)]);
    expect(verdict.invariants).toEqual([]);
  });

  it("deliveries and stalls only the local logs hold count with Redis's", () => {
    const history = redisHistory({ ...held, acks: [ack(9000)], deliveries: [delivery(1100)] });
    const records = [1200, 1300, 1400, 1500, 1600, 1700].map((ms) =>
      local("deliveries", delivery(ms), ms),
    );
    // 7 deliveries the janitor let happen: past maxDeliveries + 1 and the one failover's allowance.
    expect(verdictOf(history, records).invariants).toEqual(["over-delivered"]);
    expect(verdictOf(history, records.slice(0, 4)).invariants).toEqual([]);
  });

  it("a consumer's local log line reads back as the record it wrote", () => {
    const record = local("acks", ack(1500), 1500, false);
    const line = `acks\t1500\t0\t${ack(1500)}\n`;
    expect(localLine(record)).toBe(line);
    expect(parseLocalLog(`${line}deliveries\t7\t-\t${delivery(7)}\n`)).toEqual([
      record,
      local("deliveries", delivery(7), 7, undefined),
    ]);
  });
});

describe("failovers that did not happen", () => {
  it("a failover not announced when the schedule went on happened if a switch came within 20 s", () => {
    const fault = (at: number, note: string): AppliedFault => ({
      atMs: at,
      kind: "failover",
      target: -1,
      holdMs: 0,
      at,
      note,
    });
    const faults = [
      fault(1000, NOT_ANNOUNCED),
      fault(30_000, NOT_ANNOUNCED),
      fault(60_000, "failed: ReplyError: NOGOODSLAVE No suitable replica to promote"),
    ];
    settleFaults(faults, [9000, 55_000]);
    expect(faults.map((f) => f.happened)).toEqual([undefined, false, false]);
    expect(faults[0]?.note).toBe("announced 8000 ms after the request");
    expect(faults[1]?.note).toMatch(/never announced within 20000 ms/u);
  });
});
