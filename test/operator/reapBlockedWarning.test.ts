import { afterEach, describe, expect, it } from "vitest";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

const fixture = useRedisServer();
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The consumer's fields from XINFO CONSUMERS, or undefined while it does not exist. */
async function consumerInfo(stream: string, name: string): Promise<Map<string, unknown>> {
  const reply = (await fixture.redis.call("XINFO", "CONSUMERS", stream, "workers")) as unknown[][];
  const flat = reply.find((c) => c[c.indexOf("name") + 1] === name) ?? [];
  const fields = new Map<string, unknown>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(String(flat[i]), flat[i + 1]);
  return fields;
}

const WARNING =
  "warning: this server (before Redis 7.2) has no `inactive` in XINFO CONSUMERS: a consumer blocked in XREADGROUP on an empty stream looks idle here";

describe("consumers reap on a server without `inactive`", () => {
  it("dry run and real run both say that a consumer blocked in XREADGROUP looks idle (< 7.2 only)", async () => {
    const prefix = uniquePrefix("reap-blocked");
    const stream = `${prefix}:stream`;
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    // A live consumer: it read and acknowledged its one entry, and now waits for more, blocked
    // in XREADGROUP on the drained stream for as long as the test runs.
    const blocked = fixture.server.client();
    const id = String(await fixture.redis.xadd(stream, "*", "n", "1"));
    await blocked.call("XREADGROUP", "GROUP", "workers", "waiting", "STREAMS", stream, ">");
    await fixture.redis.xack(stream, "workers", id);
    cleanups.push(() => {
      blocked.disconnect();
      return Promise.resolve();
    });
    void blocked
      .call("XREADGROUP", "GROUP", "workers", "waiting", "BLOCK", "0", "STREAMS", stream, ">")
      .catch(() => undefined);
    await waitFor(async () => Number((await consumerInfo(stream, "waiting")).get("idle")) >= 2, {
      what: "the blocked consumer to be 2 ms idle",
    });
    const hasInactive = (await consumerInfo(stream, "waiting")).has("inactive");
    const file = await writeConfigFile(testConfig(fixture.server.url, prefix, [{}]));
    cleanups.push(file.remove);
    const args = ["consumers", "reap", "--stream", stream, "--group", "workers", "--idle", "1ms"];

    for (const mode of [["--dry-run"], []]) {
      const result = await runCli([...args, ...mode, "--config", file.path]);
      expect(result.code, mode.join(" ")).toBe(0);
      expect(result.stderr).toBe("");
      if (hasInactive) {
        expect(result.stdout).not.toContain("warning");
      } else {
        expect(result.stdout).toMatch(/: (would reap|reaped) 1 consumer\(s\): waiting;/u);
        expect(result.stdout).toContain(WARNING);
      }
    }
  });
});
