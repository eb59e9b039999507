import { describe, expect, it } from "vitest";
import { deadLetterIndexKeys } from "../../src/core/deadLetterIndex.js";
import { resolveGroup, type ResolvedGroup } from "../../src/core/resolveGroup.js";
import { readGroupDetail } from "../../src/ui/readGroupDetail.js";
import { renderGroupPage } from "../../src/ui/renderGroupPage.js";
import { addStuckEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";

const fixture = useRedisServer();
const MB = 1024 * 1024;

/** One shared buffer per size: Redis holds the copies, this process only one of each. */
const bodies = new Map<number, Buffer>();
function bigBody(n: number): Buffer {
  const size = 2 * MB + (n % 4) * 256 * 1024;
  const found = bodies.get(size);
  if (found !== undefined) return found;
  const made = Buffer.alloc(size, 0x61 + (n % 4));
  bodies.set(size, made);
  return made;
}

function envelope(group: ResolvedGroup, n: number): string[] {
  return [
    ...["x-original-id", `1000-${n}`, "x-original-stream", group.stream],
    ...["x-original-group", group.group, "x-delivery-count", "5"],
    ...["x-dead-letter-reason", "max-deliveries", "x-dead-lettered-at", String(1_700_000_000_000)],
    ...["x-last-consumer", `consumer-${n}`],
  ];
}

/**
 * `pending` big entries pending for the group, the `trimmed` oldest of them trimmed away
 * (ghosts below the stream's first id), and `dead` big dead letters of the group, indexed (the
 * index holds their envelopes, as the janitor writes it) when `indexed`.
 */
async function bigGroup(
  name: string,
  options: { pending: number; trimmed: number; dead: number; indexed: boolean },
): Promise<ResolvedGroup> {
  const { redis } = fixture;
  const prefix = uniquePrefix(name);
  const config = testConfig(fixture.server.url, prefix, [{ stream: `${prefix}:s`, group: "g" }]);
  const spec = config.groups[0];
  if (spec === undefined) throw new Error("no group");
  const group = resolveGroup(spec);
  const ids = await addStuckEntries(
    redis,
    group.stream,
    group.group,
    Array.from({ length: options.pending }, (_, n) => ["body", bigBody(n)]),
    { idleMs: 60_000, deliveries: 2 },
  );
  const firstKept = ids[options.trimmed];
  if (options.trimmed > 0 && firstKept !== undefined) {
    await redis.xtrim(group.stream, "MINID", firstKept);
  }
  const index = deadLetterIndexKeys(group);
  for (let n = 0; n < options.dead; n += 1) {
    const id = await redis.xadd(
      group.deadLetterStream,
      "*",
      ...envelope(group, n),
      "body",
      bigBody(n),
    );
    if (options.indexed && id !== null) await redis.xadd(index.index, id, ...envelope(group, n));
  }
  if (options.indexed) await redis.hset(index.state, "complete", "1");
  return group;
}

/** The commands Redis's slow log (on at 10 ms) caught during one page view, and the view. */
async function oneViewLoggingSlowCalls(group: ResolvedGroup, showBodies: boolean) {
  const { redis } = fixture;
  await redis.config("SET", "slowlog-log-slower-than", "10000");
  await redis.slowlog("RESET");
  const detail = await readGroupDetail(fixture.server.client(), group, "", { showBodies });
  const slow = (await redis.slowlog("GET", 100)) as [number, number, number, unknown[]][];
  await redis.config("SET", "slowlog-log-slower-than", "-1");
  const logged = slow.map(([, , usec, args]) => ({
    usec,
    command: args.slice(0, 3).map(String).join(" "),
  }));
  return { logged, detail };
}

/**
 * Runs a page view with Redis's slow log on at 10 ms; returns what it logged and the page. The
 * slow log counts the wall time a command spent, so on a busy machine a command the scheduler
 * paused is logged however little it reads. A command counts as slow when every one of up to 3
 * views logs it: a command that copies megabytes is slow each time, a paused one is not.
 */
async function viewLoggingSlowCalls(group: ResolvedGroup, showBodies: boolean) {
  const { redis } = fixture;
  let { logged: slowEveryTime, detail } = await oneViewLoggingSlowCalls(group, showBodies);
  for (let view = 1; view < 3 && slowEveryTime.length > 0; view += 1) {
    const again = await oneViewLoggingSlowCalls(group, showBodies);
    const commands = new Set(again.logged.map((entry) => entry.command));
    slowEveryTime = slowEveryTime.filter((entry) => commands.has(entry.command));
    detail = again.detail;
  }
  const logged = slowEveryTime.map((entry) => `${entry.usec} us: ${entry.command}`);
  const page = renderGroupPage({
    group,
    status: undefined,
    nowMs: Date.now(),
    detail,
    lastSweep: undefined,
    showBodies,
    paused: true,
    refreshSeconds: 10,
  });
  // Each test's megabytes go once it has looked: the server's memory stays modest.
  await redis.del(
    group.stream,
    group.deadLetterStream,
    ...(Object.values(deadLetterIndexKeys(group)) as string[]),
  );
  return { logged, page, detail };
}

describe("the group page's cost on Redis (20 pending entries and 20 dead letters of 2-3 MB)", () => {
  it("sends no command or script that keeps Redis busy over 10 ms; ghosts below the first id found", async () => {
    const group = await bigGroup("cost", { pending: 20, trimmed: 5, dead: 20, indexed: true });
    const { logged, page, detail } = await viewLoggingSlowCalls(group, false);
    expect(logged).toEqual([]);
    // The five trimmed ids are certainly ghosts: below the stream's first entry.
    expect(page.match(/<span class="status s-ERROR">ghost<\/span>/gu)).toHaveLength(5);
    // The envelopes come from the index: all 20 dead letters listed, no body read.
    expect(detail.deadLetters.ok && detail.deadLetters.value.letters.length).toBe(20);
    expect(page).toContain("consumer-19");
    // What the page could not tell within its byte budget, it says.
    expect(page).toContain("not checked");
  });

  it("with showBodies reads whole bodies only within the byte budget and says what it left out", async () => {
    const group = await bigGroup("bodies", { pending: 0, trimmed: 0, dead: 20, indexed: true });
    const { logged, page } = await viewLoggingSlowCalls(group, true);
    expect(logged).toEqual([]);
    expect(page).toContain("consumer-19");
    expect(page).toMatch(/bodies? of \d+ dead letters? left out/u);
    // The newest body is read whole (the budget is checked before a read), the 19 others not.
    expect(page).toContain("The bodies of 19 dead letters left out");
  });

  it("with showBodies and small dead letters, the index's envelopes get their bodies", async () => {
    const group = await bigGroup("small", { pending: 0, trimmed: 0, dead: 0, indexed: true });
    const { redis } = fixture;
    const index = deadLetterIndexKeys(group);
    for (let n = 0; n < 3; n += 1) {
      const id = await redis.xadd(
        group.deadLetterStream,
        "*",
        ...envelope(group, n),
        "order",
        `small-body-${n}`,
      );
      await redis.xadd(index.index, id ?? "", ...envelope(group, n));
    }
    const { logged, page } = await viewLoggingSlowCalls(group, true);
    expect(logged).toEqual([]);
    for (let n = 0; n < 3; n += 1) expect(page).toContain(`small-body-${n}`);
    expect(page).not.toContain("left out");
    expect(page).toContain("The newest 3 of the 3 dead letters of this group");
  });

  it("a legacy group (index not complete) says so and reads no body past the budget", async () => {
    const group = await bigGroup("legacy", { pending: 0, trimmed: 0, dead: 20, indexed: false });
    const { logged, page } = await viewLoggingSlowCalls(group, false);
    expect(logged).toEqual([]);
    expect(page).toContain("index of this group is not complete");
  });
});
