import { describe, expect, it } from "vitest";
import { runSweepPage } from "../../src/scripts/sweepPage.js";
import { sweepAll } from "../../src/sweep/sweepAll.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import {
  addStuckEntries,
  entryFields,
  numberedBodies,
  pendingEntries,
  streamEntries,
} from "../support/fabricatePel.js";
import { expectExactlyOnce } from "../support/expectExactlyOnce.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import {
  groupConfig,
  JANITOR_CONSUMER,
  neverAborted,
  sweepContext,
} from "../support/sweepHarness.js";

const fixture = useRedisServer();

describe("byte-exact copies", () => {
  it("copies invalid UTF-8, empty values, a 1 MB value and 1,000 fields exactly, in order", async () => {
    const stream = uniquePrefix("bytes");
    const invalidUtf8 = Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x80]);
    const big = Buffer.alloc(1024 * 1024, 0xab);
    big[0] = 0xc0; // not valid UTF-8 either
    const wide: Buffer[] = [];
    for (let i = 0; i < 1000; i += 1) wide.push(Buffer.from(`f${i}`), Buffer.from([i % 256, 0xff]));
    const bodies = [
      [Buffer.from("bin"), invalidUtf8, invalidUtf8, Buffer.from("")],
      [Buffer.from("empty"), Buffer.alloc(0)],
      [Buffer.from("big"), big],
      wide,
    ];
    const ids = await addStuckEntries(fixture.redis, stream, "workers", bodies);
    const originals = await Promise.all(ids.map((id) => entryFields(fixture.redis, stream, id)));

    for (const action of ["requeue", "dead-letter"] as const) {
      const group = groupConfig(stream, {
        action,
        group: action,
        requeueStream: `${stream}:copies`,
      });
      await fixture.redis.xgroup("CREATE", stream, action, "0");
      await fixture.redis.call("XREADGROUP", "GROUP", action, "crashed", "STREAMS", stream, ">");
      await fixture.redis.call(
        "XCLAIM",
        stream,
        action,
        "crashed",
        0,
        ...ids,
        "IDLE",
        3_600_000,
        "JUSTID",
      );
      const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
      expect(result.error).toBeUndefined();
      expect(result.claimed).toBe(4);

      const target = action === "requeue" ? group.requeueStream : group.deadLetterStream;
      const metadataValues = action === "requeue" ? 4 : 14;
      const copies = (await fixture.redis.xrangeBuffer(target, "-", "+")) as [Buffer, Buffer[]][];
      expect(copies).toHaveLength(4);
      copies.forEach(([, fields], i) => {
        // The original fields keep their positions; the metadata follows them.
        const copied = fields.slice(0, fields.length - metadataValues);
        const original = originals[i] ?? [];
        expect(copied.length).toBe(original.length);
        expect(Buffer.concat(copied).equals(Buffer.concat(original))).toBe(true);
        copied.forEach((value, j) =>
          expect(value.equals(original[j] ?? Buffer.alloc(0))).toBe(true),
        );
      });
    }
  });
});

describe("crash safety", () => {
  it("never writes a copy twice when a page is run again after a crash", async () => {
    const stream = uniquePrefix("rerun");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(250));
    const group = groupConfig(stream);
    const scripted = registerScripts(fixture.redis);
    const page = {
      group,
      janitorConsumer: JANITOR_CONSUMER,
      cursor: "0-0",
      maxClaimed: 100,
      maxExamined: 100,
      firstWindow: 100,
      budgetMs: 1000,
      rotation: 0,
      fence: undefined,
    };
    // The janitor dies after the script ran but before it recorded the new cursor: the next
    // leader runs the very same page again, then the whole sweep.
    const first = await runSweepPage(scripted, page);
    const again = await runSweepPage(scripted, page);
    const sweep = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

    expect(first.requeued).toBe(100);
    expect(again.requeued).toBe(100); // the next hundred: the first ones are no longer pending
    expect(sweep.requeued).toBe(50);
    await expect(
      expectExactlyOnce(fixture.redis, {
        stream,
        group: "workers",
        deadLetterStream: group.deadLetterStream,
        originalIds: ids,
      }),
    ).resolves.toEqual({ stillPending: 0, requeued: 250, deadLettered: 0 });
    const rerun = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
    expect(rerun).toMatchObject({ claimed: 0, requeued: 0 });
  });

  it("changes nothing when the fence does not match", async () => {
    const stream = uniquePrefix("fenced");
    await fixture.redis.set(`${stream}:lease`, "someone-else");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(5));
    const before = await pendingEntries(fixture.redis, stream, "workers");
    const group = groupConfig(stream);
    const context = sweepContext(fixture.redis, { fence: { key: `${stream}:lease`, value: "me" } });

    const [result, next] = await sweepAll(
      [group, groupConfig(`${stream}-2`)],
      context,
      neverAborted,
    );

    expect(result).toMatchObject({ claimed: 0, errorKind: "fenced" });
    expect(next).toMatchObject({ errorKind: "fenced" });
    const after = await pendingEntries(fixture.redis, stream, "workers");
    expect(after.map((e) => [e.id, e.consumer, e.deliveries])).toEqual(
      before.map((e) => [e.id, e.consumer, e.deliveries]),
    );
    expect(await fixture.redis.xlen(stream)).toBe(ids.length);
    expect(await fixture.redis.exists(group.deadLetterStream)).toBe(0);

    await fixture.redis.set(`${stream}:lease`, "me");
    const fenced = await sweepOnce(group, context, neverAborted);
    expect(fenced.error).toBeUndefined();
    expect(fenced.requeued).toBe(5);
  });
});

describe("budget", () => {
  it("sweeps a 10,000-entry PEL under a 1,000-entry budget over ten sweeps, resuming the cursor", async () => {
    const stream = uniquePrefix("budget");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(10_000));
    const group = groupConfig(stream);
    const context = sweepContext(fixture.redis, { maxEntriesPerGroup: 1000, batchSize: 300 });
    const results = [];
    for (let sweep = 0; sweep < 10; sweep += 1)
      results.push(await sweepOnce(group, context, neverAborted));

    expect(results.map((r) => r.examined)).toEqual(Array<number>(10).fill(1000));
    expect(results.map((r) => r.requeued)).toEqual(Array<number>(10).fill(1000));
    expect(results.map((r) => r.complete)).toEqual([...Array<boolean>(9).fill(false), true]);
    await expect(
      expectExactlyOnce(fixture.redis, {
        stream,
        group: "workers",
        deadLetterStream: group.deadLetterStream,
        originalIds: ids,
      }),
    ).resolves.toMatchObject({ requeued: 10_000 });
  });

  it("stops between pages when the signal is aborted", async () => {
    const stream = uniquePrefix("abort");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(50));
    const controller = new AbortController();
    controller.abort();
    const result = await sweepOnce(
      groupConfig(stream),
      sweepContext(fixture.redis),
      controller.signal,
    );
    expect(result).toMatchObject({ pages: 0, claimed: 0, complete: false });
  });
});

describe("monitor", () => {
  it("never claims", async () => {
    const stream = uniquePrefix("monitor");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(5), { deliveries: 99 });
    const before = await pendingEntries(fixture.redis, stream, "workers");
    const result = await sweepOnce(
      groupConfig(stream, { action: "monitor" }),
      sweepContext(fixture.redis),
      neverAborted,
    );
    expect(result).toMatchObject({ claimed: 0, deadLettered: 0, complete: true });
    expect((await pendingEntries(fixture.redis, stream, "workers")).map((e) => e.consumer)).toEqual(
      before.map((e) => e.consumer),
    );
    expect(await streamEntries(fixture.redis, stream)).toHaveLength(5);
  });
});
