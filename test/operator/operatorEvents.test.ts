import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { eventsIn } from "../support/eventsIn.js";
import { runCli } from "../support/daemonProcess.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { testConfig } from "../support/testConfig.js";
import { useConfigFiles } from "../support/useConfigFiles.js";
import { addDeadLetters } from "./deadLetterFixtures.js";

/**
 * Contract section 8: the operator commands that change something write their advisory event
 * (`by` operator@<hostname>) after the work, best effort; a dry run writes none.
 */
const fixture = useRedisServer();
const configPath = useConfigFiles();
const BY = `operator@${hostname()}`;

/** A configuration of the test's own (events under the prefix); `groups` empty: defaults apply. */
async function setup(name: string) {
  const prefix = uniquePrefix(name);
  const config = testConfig(fixture.server.url, prefix);
  const stream = `${prefix}:orders`;
  await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
  return { stream, events: config.events.stream, path: await configPath(config) };
}

describe("advisory events of the operator commands", () => {
  it("dlq redrive writes dlq-redriven and dlq purge dlq-purged, with the selectors used; a dry run writes nothing", async () => {
    const { stream, events, path } = await setup("op-events-dlq");
    const dead = groupConfig(stream).deadLetterStream;
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: dead,
      count: 5,
    });
    const pair = ["--stream", stream, "--group", "workers", "--config", path];

    const dry = await runCli(["dlq", "redrive", ...pair, "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(await eventsIn(fixture.redis, events)).toEqual([]);

    const redrive = await runCli(["dlq", "redrive", ...pair, "--limit", "3", "--rate", "0"]);
    expect(redrive.stderr).toBe("");
    expect(redrive.code).toBe(0);
    const purge = await runCli(["dlq", "purge", ...pair, "--all", "--json"]);
    expect(purge.stderr).toBe("");
    expect(JSON.parse(purge.stdout)).toMatchObject({ purged: 2 });

    const written = await eventsIn(fixture.redis, events);
    expect(written.map(({ type }) => type)).toEqual(["dlq-redriven", "dlq-purged"]);
    const [redriven, purged] = written;
    expect(redriven).toMatchObject({ by: BY, stream, group: "workers", count: "3", ids: "" });
    expect(JSON.parse(redriven?.detail ?? "")).toEqual({
      deadLetterStream: dead,
      target: stream,
      limit: 3,
    });
    expect(purged).toMatchObject({ by: BY, stream, group: "workers", count: "2" });
    expect(JSON.parse(purged?.detail ?? "")).toEqual({ deadLetterStream: dead, all: true });
    expect(Number(redriven?.at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("dlq purge --id names the ids it purged", async () => {
    const { stream, events, path } = await setup("op-events-ids");
    const dead = groupConfig(stream).deadLetterStream;
    const letters = await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: dead,
      count: 3,
    });
    const ids = letters.slice(0, 2).map(({ id }) => id);
    const pair = ["--stream", stream, "--group", "workers", "--config", path];
    const purge = await runCli([
      "dlq",
      "purge",
      ...pair,
      "--id",
      ids[0] ?? "",
      "--id",
      ids[1] ?? "",
    ]);
    expect(purge.code).toBe(0);
    const [purged] = await eventsIn(fixture.redis, events);
    expect(purged).toMatchObject({ type: "dlq-purged", count: "2", ids: ids.join(" ") });
    expect(JSON.parse(purged?.detail ?? "")).toEqual({ deadLetterStream: dead, ids });
  });

  it("consumers reap writes consumers-reaped with the names, trim writes trimmed with the policy and who held it back", async () => {
    const { stream, events, path } = await setup("op-events-maint");
    for (const name of ["gone-1", "gone-2"])
      await fixture.redis.xgroup("CREATECONSUMER", stream, "workers", name);
    for (let i = 0; i < 10; i += 1) await fixture.redis.xadd(stream, "*", "n", String(i));
    const held = await addStuckEntries(fixture.redis, stream, "legacy", numberedBodies(2));

    const reap = await runCli([
      "consumers",
      "reap",
      ...["--stream", stream, "--group", "workers", "--idle", "0", "--config", path],
    ]);
    expect(reap.code).toBe(0);
    // workers has not read the 10 entries yet: trim removes nothing, and writes no event.
    const nothing = await runCli(["trim", "--stream", stream, "--max-len", "1", "--config", path]);
    expect(nothing.code).toBe(0);
    // Once it has, legacy's 2 pending entries still hold those back: 10 removed, 2 left.
    await fixture.redis.call("XGROUP", "SETID", stream, "workers", "$");
    const trim = await runCli(["trim", "--stream", stream, "--max-len", "1", "--config", path]);
    expect(trim.stderr).toBe("");

    const written = await eventsIn(fixture.redis, events);
    expect(written.map(({ type }) => type)).toEqual(["consumers-reaped", "trimmed"]);
    const [reaped, trimmed] = written;
    expect(reaped).toMatchObject({ by: BY, stream, group: "workers", count: "2" });
    expect(reaped?.ids?.split(" ").sort()).toEqual(["gone-1", "gone-2"]);
    expect(JSON.parse(reaped?.detail ?? "")).toMatchObject({ idleMs: 0 });
    expect(trimmed).toMatchObject({ by: BY, stream, group: "", count: "10" });
    expect(JSON.parse(trimmed?.detail ?? "")).toEqual({
      maxLen: 1,
      length: 2,
      heldBackBy: [{ group: "legacy", neededFromId: held[0] }],
    });
  });

  it("`events` shows the operator's events", async () => {
    const { stream, path } = await setup("op-events-shown");
    await fixture.redis.xgroup("CREATECONSUMER", stream, "workers", "gone");
    const reap = await runCli([
      "consumers",
      "reap",
      ...["--stream", stream, "--group", "workers", "--idle", "0", "--config", path],
    ]);
    expect(reap.code).toBe(0);
    const shown = await runCli(["events", "--config", path, "--type", "consumers-reaped"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(
      new RegExp(`consumers-reaped  ${stream}/workers  count 1  by ${BY}  ids gone`, "u"),
    );
  });
});
