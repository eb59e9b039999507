import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { expectExactlyOnce } from "../support/expectExactlyOnce.js";
import { runCli } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";
import { addDeadLetters, fieldValue, rawEntries } from "./deadLetterFixtures.js";

const fixture = useRedisServer();
const TOTAL = 6000;
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;

describe("dlq redrive killed mid-run", () => {
  it("is re-run to completion with every original id exactly once and bodies byte-exact", async () => {
    const stream = uniquePrefix("redrive-killed");
    const target = `${stream}:retry`;
    const group = groupConfig(stream, { requeueStream: target });
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    const letters: Awaited<ReturnType<typeof addDeadLetters>> = [];
    for (let batch = 0; batch < 3; batch += 1) {
      letters.push(
        ...(await addDeadLetters(fixture.redis, {
          stream,
          group: "workers",
          deadLetterStream: group.deadLetterStream,
          count: 2000,
          firstOriginal: batch * 2000 + 1,
        })),
      );
    }
    const config = {
      groups: [{ stream, group: "workers", requeueStream: target }],
    };
    const env = { STREAM_JANITOR_REDIS_URL: fixture.server.url };
    const { writeConfigFile } = await import("../support/daemonProcess.js");
    const file = await writeConfigFile(config);
    try {
      const args = [
        "dlq",
        "redrive",
        "--config",
        file.path,
        "--stream",
        stream,
        "--group",
        "workers",
      ];
      // 6,000 dead letters at 600/s: ten seconds, killed after the first 300 moved.
      const child = spawn(process.execPath, [CLI, ...args, "--rate", "600"], {
        env: { ...process.env, ...env },
        stdio: "ignore",
      });
      const exited = once(child, "exit");
      await waitFor(async () => (await fixture.redis.xlen(target)) >= 300, {
        what: "the redrive to move 300 entries",
      });
      child.kill("SIGKILL");
      await exited;
      const movedBeforeKill = await fixture.redis.xlen(target);
      expect(movedBeforeKill).toBeLessThan(TOTAL);
      expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(TOTAL - movedBeforeKill);

      const rerun = await runCli([...args, "--rate", "0", "--json"], env);
      expect(rerun.stderr).toBe("");
      expect(rerun.code).toBe(0);
      expect(JSON.parse(rerun.stdout)).toEqual({
        redriven: TOTAL - movedBeforeKill,
        remaining: 0,
        dryRun: false,
      });

      const outcome = await expectExactlyOnce(fixture.redis, {
        stream,
        group: "workers",
        requeueStream: target,
        deadLetterStream: group.deadLetterStream,
        originalIds: letters.map((letter) => letter.originalId),
      });
      expect(outcome).toEqual({ stillPending: 0, requeued: TOTAL, deadLettered: 0 });
      const byOriginal = new Map(letters.map((letter) => [letter.originalId, letter.fields]));
      for (const [, fields] of await rawEntries(fixture.redis, target)) {
        const original = byOriginal.get(fieldValue(fields, "x-original-id") ?? "");
        expect(original).toBeDefined();
        expect(fields.slice(0, original?.length)).toEqual(original);
      }
    } finally {
      await file.remove();
    }
  });
});
