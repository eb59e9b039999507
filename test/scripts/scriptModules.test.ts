import { describe, expect, it } from "vitest";
import { loadScript } from "../../src/scripts/scriptedRedis.js";
import { fenceLeaseArgs, parseFenceLeaseReply } from "../../src/scripts/fenceLease.js";
import {
  moveFencingTokenArgs,
  parseMoveFencingTokenReply,
} from "../../src/scripts/moveFencingToken.js";
import {
  parsePurgeDeadLettersReply,
  purgeDeadLettersArgs,
} from "../../src/scripts/purgeDeadLetters.js";
import { redriveDeadLettersArgs } from "../../src/scripts/redriveDeadLetters.js";
import { parseReapConsumersReply, reapConsumersArgs } from "../../src/scripts/reapConsumers.js";
import { parseReadGroupStatsReply, readGroupStatsArgs } from "../../src/scripts/readGroupStats.js";
import { parseSweepPageReply, sweepPageArgs } from "../../src/scripts/sweepPage.js";
import { deadLetterIndexKeys } from "../../src/core/deadLetterIndex.js";
import { parseSafeTrimReply, safeTrimArgs } from "../../src/scripts/safeTrim.js";
import { parseRedriveDeadLettersReply } from "../../src/scripts/redriveDeadLetters.js";
import type { Fence } from "../../src/core/fence.js";

const SCRIPTS = [
  "sweepPage.lua",
  "fenceLease.lua",
  "moveFencingToken.lua",
  "redriveDeadLetters.lua",
  "purgeDeadLetters.lua",
  "reapConsumers.lua",
  "safeTrim.lua",
  "readGroupStats.lua",
  "indexDeadLetters.lua",
  "ensureRetryLane.lua",
  "trimRetryLane.lua",
  "redriveTaskBatch.lua",
  "startRedriveTask.lua",
  "cancelRedriveTask.lua",
  "redriveTaskDirectory.lua",
];

describe("the script loader", () => {
  it.each(SCRIPTS)("puts the includes of %s in place, each once, the shebang first", (file) => {
    const source = loadScript(file);
    expect(source).not.toMatch(/^--- @include/mu);
    expect(source.startsWith("#!lua")).toBe(true);
    for (const name of ["checkFence", "splitId", "metadataNames", "readersOf"]) {
      expect(source.split(`local function ${name}(`).length).toBeLessThanOrEqual(2);
    }
  });

  it("finds the includes in dist/ as well, the way the package ships them", async () => {
    const dist = (await import(
      new URL("../../dist/scripts/scriptedRedis.js", import.meta.url).href
    )) as { loadScript: (file: string) => string };
    for (const file of SCRIPTS) expect(dist.loadScript(file)).toBe(loadScript(file));
  });
});

const fence: Fence = { key: "lease", value: "v1" };
const clusterFence: Fence = { key: "lease", value: "v1", slotToken: 7 };

describe("argument builders", () => {
  it("fence: last of KEYS when given, its value in the same ARGV place, '' when unfenced", () => {
    const reap = {
      stream: "s",
      group: "g",
      minInactiveMs: 5,
      janitorConsumer: "j",
      dryRun: false,
    };
    expect(reapConsumersArgs({ ...reap, fence })).toEqual([
      2,
      "s",
      "lease",
      "g",
      5,
      "j",
      "0",
      "v1",
    ]);
    expect(reapConsumersArgs({ ...reap, fence: undefined })).toEqual([
      1,
      "s",
      "g",
      5,
      "j",
      "0",
      "",
    ]);
    const trim = {
      stream: "{s}",
      maxLen: 10,
      maxAgeMs: undefined,
      pageSize: 100,
      dryRun: true,
      countedBefore: 3,
      after: "5-0",
    };
    expect(safeTrimArgs({ ...trim, fence: clusterFence })).toEqual([
      2,
      "{s}",
      "{s}:lease:fence",
      10,
      0,
      100,
      "1",
      "token:7",
      3,
      "5-0",
    ]);
  });

  it("no limit is undefined in TypeScript, translated only here", () => {
    const trim = {
      stream: "s",
      maxLen: undefined,
      maxAgeMs: undefined,
      pageSize: 100,
      dryRun: false,
      countedBefore: 9,
      after: "5-0",
      fence: undefined,
    };
    // -1: no length limit (0 is one); 0: no age limit. Dry-run fields are ignored otherwise.
    expect(safeTrimArgs(trim)).toEqual([1, "s", -1, 0, 100, "0", "", 0, "-"]);
  });

  it("purge and redrive take the same ARGV in the same places", () => {
    const selection = {
      deadLetterStream: "dl",
      stream: "s",
      group: "g",
      reason: undefined,
      cursor: "0-0",
      endId: "+",
      scanLimit: 500,
      limit: 20,
      dryRun: true,
      ids: ["1-0"],
    };
    const argv = ["s", "g", "0-0", "+", 500, 20, "", "1", "1-0"];
    // Then the group's dead-letter index, which each dead letter removed leaves too.
    const { index } = deadLetterIndexKeys(selection);
    expect(purgeDeadLettersArgs(selection)).toEqual([2, "dl", index, ...argv]);
    expect(redriveDeadLettersArgs({ ...selection, target: "t" })).toEqual([
      3,
      "dl",
      "t",
      index,
      ...argv,
    ]);
  });
});

describe("reply parsers", () => {
  it("name the fields of a reply", () => {
    expect(parseSafeTrimReply([3, 5, "9-0", "10-0", ["g", "10-0"], 0])).toEqual({
      removed: 3,
      wanted: 5,
      lastRemovedId: "9-0",
      floorId: "10-0",
      blockedBy: [{ group: "g", neededFromId: "10-0" }],
      more: false,
    });
    expect(parseRedriveDeadLettersReply(["7-0", 4, 2, 1, [], ["audit", 2], 2, ["8-0"]])).toEqual({
      nextCursor: "7-0",
      examined: 4,
      moved: 2,
      done: true,
      oversizedIds: [],
      heldBackBy: [{ group: "audit", entries: 2 }],
      held: 2,
      unknownIds: ["8-0"],
    });
  });

  it("refuse a reply of another shape", () => {
    expect(() => parseSafeTrimReply([1, 2])).toThrow(/unexpected safeTrim reply/u);
  });
});

describe("the other scripts' modules", () => {
  const keys = { lease: "lease", token: "lease:token", holder: "lease:holder" };

  it("fenceLease and moveFencingToken: the lease keys, and 0 read as no token", () => {
    expect(fenceLeaseArgs({ keys, leaseValue: "v", host: "h", pid: 42 })).toEqual([
      3,
      "lease",
      "lease:token",
      "lease:holder",
      "v",
      "h",
      42,
    ]);
    expect(parseFenceLeaseReply(0)).toBeUndefined();
    expect(parseFenceLeaseReply(8)).toBe(8);
    expect(() => parseFenceLeaseReply("8")).toThrow(/the lease fence script/u);
    expect(moveFencingTokenArgs({ keys, leaseValue: "v", fenceSeen: 7 })).toEqual([
      3,
      "lease",
      "lease:token",
      "lease:holder",
      "v",
      7,
    ]);
    expect(parseMoveFencingTokenReply(0)).toBeUndefined();
    expect(parseMoveFencingTokenReply(9)).toBe(9);
  });

  it("purge and reap replies, named", () => {
    expect(parsePurgeDeadLettersReply(["3-0", 3, 1, 0, ["audit", 2], 2, []])).toEqual({
      nextCursor: "3-0",
      examined: 3,
      deleted: 1,
      done: false,
      heldBackBy: [{ group: "audit", entries: 2 }],
      held: 2,
      unknownIds: [],
    });
    expect(parseReapConsumersReply([["gone"], 1, 1])).toEqual({
      reaped: ["gone"],
      keptWithPending: 1,
      usedInactive: true,
    });
  });

  it("readGroupStats: streams once each in KEYS, then the dead-letter streams (and lanes)", () => {
    const groups = [
      { stream: "a", group: "g1", deadLetterStream: "a:dl" },
      { stream: "a", group: "g2", deadLetterStream: "a:dl2" },
      { stream: "b", group: "g1", deadLetterStream: "b:dl" },
    ];
    // Last in KEYS: each group's dead-letter index and its state.
    const indexes = groups.flatMap((g) => [
      deadLetterIndexKeys(g).index,
      deadLetterIndexKeys(g).state,
    ]);
    expect(readGroupStatsArgs({ groups, perConsumer: true })).toEqual([
      11,
      "a",
      "b",
      "a:dl",
      "a:dl2",
      "b:dl",
      ...indexes,
      "1",
      2,
      1,
      "g1",
      0,
      1,
      "g2",
      0,
      2,
      "g1",
      0,
    ]);
    // Streams a (read, length 10) and b (WRONGTYPE); a group of a, read, and one of b.
    const stream = ["", 10, "WRONGTYPE b", 0];
    // -1: no retry lane; the last two: the group's own dead letters (4), its index complete (1).
    const read = ["", 2, "5-0", 3, "4-0", 60, 1, 0, -1, 0, 4, 1];
    const request = { groups: [groups[0], groups[2]] as typeof groups, perConsumer: false };
    expect(parseReadGroupStatsReply(request, [1, 500_000, ...stream, ...read, "S"])).toEqual({
      nowMs: 1500,
      streamLengths: new Map([["a", 10]]),
      groups: [
        {
          status: "read",
          stats: {
            pending: 2,
            lastDeliveredId: "5-0",
            lag: 3,
            oldestPendingId: "4-0",
            oldestPendingIdleMs: 60,
            oldestPendingDeliveries: 1,
            deadLetterLength: 0,
            consumers: [],
            deadLetters: 4,
            deadLettersExact: true,
          },
        },
        { status: "failed", error: "WRONGTYPE b" },
      ],
    });
  });

  it("sweepPage: a reply read by name", () => {
    const args = sweepPageArgs({
      group: {
        stream: "s",
        requeueStream: "s",
        deadLetterStream: "s:dl",
        touchesKey: "s:touches",
        group: "g",
        minIdleMs: 1000,
        maxDeliveries: 5,
        action: "requeue",
        deadLetterMaxLen: 0,
      } as unknown as Parameters<typeof sweepPageArgs>[0]["group"],
      janitorConsumer: "j",
      cursor: "0-0",
      maxClaimed: 10,
      maxExamined: 100,
      firstWindow: 16,
      budgetMs: 2,
      rotation: 0,
      fence,
    });
    // KEYS: source, target, dead letters, touches, the fence, the carried counts of source and
    // target, then the dead-letter index's three.
    expect(args.slice(0, 6)).toEqual([10, "s", "s", "s:dl", "s:touches", "lease"]);
    expect(args.slice(6, 8)).toEqual(["{s}:janitor-carried:g", "{s}:janitor-carried:g"]);
    expect(args).toContain("v1");
    const counts = ["examined", "claimed", "requeued", "reassigned", "deadLetteredMaxDeliveries"];
    const more = ["deadLetteredAction", "leftPending", "handedOff", "windows", "invalidCounts"];
    const reply = ["cursor", "0-0", "durationUs", 1500, "claimUs", 500, "deadLettersDropped", 0];
    const perEntryReasons = ["deadLetteredMaxIdle", "claimedFromActiveConsumer"];
    for (const name of [...counts, ...more, ...perEntryReasons]) reply.push(name, 1);
    expect(parseSweepPageReply(reply)).toMatchObject({ nextCursor: "0-0", durationMs: 1.5 });
  });

  it("sweepPage: the ids of what each action handled, as lists ([] when the reply has none)", () => {
    const reply: unknown[] = ["cursor", "0-0", "durationUs", 1, "claimUs", 1];
    const counts = ["examined", "claimed", "requeued", "reassigned", "deadLetteredMaxDeliveries"];
    const more = ["deadLetteredAction", "deadLetteredMaxIdle", "leftPending", "handedOff"];
    const rest = ["windows", "invalidCounts", "claimedFromActiveConsumer", "deadLettersDropped"];
    for (const name of [...counts, ...more, ...rest]) reply.push(name, 0);
    expect(parseSweepPageReply(reply)).toMatchObject({
      requeuedIds: [],
      reassignedIds: [],
      deadLetteredIds: [],
    });
    reply.push("requeuedIds", ["1-0", "2-0"], "reassignedIds", ["3-0"], "deadLetteredIds", []);
    expect(parseSweepPageReply(reply)).toMatchObject({
      requeuedIds: ["1-0", "2-0"],
      reassignedIds: ["3-0"],
      deadLetteredIds: [],
    });
  });
});
