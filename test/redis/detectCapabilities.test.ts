import { describe, expect, it } from "vitest";
import {
  capabilitiesFromDocs,
  checkSupported,
  detectCapabilities,
  parseServerInfo,
  UnsupportedRedisError,
} from "../../src/redis/detectCapabilities.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";

const fixture = useRedisServer();

/** `INFO server` as each server prints it (trimmed to the lines that matter, CRLF as sent). */
const INFO = {
  redis62:
    "# Server\r\nredis_version:6.2.14\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\n",
  redis70:
    "# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\n",
  redis74:
    "# Server\r\nredis_version:7.4.1\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\n",
  valkey72: "# Server\r\nredis_version:7.2.5\r\nserver_name:valkey\r\nvalkey_version:7.2.5\r\n",
  valkey80: "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n",
  // A Valkey build older than 7.2 would still say valkey: refused by its own version.
  valkey71: "# Server\r\nredis_version:7.1.0\r\nserver_name:valkey\r\nvalkey_version:7.1.0\r\n",
};

describe("server identity from INFO server", () => {
  it("reads the product and its own version (Valkey pins redis_version at 7.2.4)", () => {
    expect(parseServerInfo(INFO.redis70)).toEqual({
      product: "redis",
      version: "7.0.15",
      redisVersion: "7.0.15",
    });
    expect(parseServerInfo(INFO.valkey80)).toEqual({
      product: "valkey",
      version: "8.0.1",
      redisVersion: "7.2.4",
    });
    expect(() => parseServerInfo("# Server\r\n")).toThrow(UnsupportedRedisError);
  });

  it("refuses Redis < 7.0 and Valkey < 7.2, naming the version found and the one needed", () => {
    for (const text of [INFO.redis70, INFO.redis74, INFO.valkey72, INFO.valkey80]) {
      expect(() => checkSupported(parseServerInfo(text))).not.toThrow();
    }
    expect(() => checkSupported(parseServerInfo(INFO.redis62))).toThrow(
      /^Redis 6\.2\.14 is not supported: stream-janitor needs Redis >= 7\.0\b/u,
    );
    expect(() => checkSupported(parseServerInfo(INFO.valkey71))).toThrow(
      /^Valkey 7\.1\.0 is not supported: stream-janitor needs Valkey >= 7\.2\b/u,
    );
  });
});

/** Whether this server's XINFO CONSUMERS reports `inactive` (Redis 7.2+, Valkey), asked of it. */
async function consumersReportInactive(): Promise<boolean> {
  const stream = uniquePrefix("probe");
  await fixture.redis.xgroup("CREATE", stream, "g", "$", "MKSTREAM");
  await fixture.redis.xgroup("CREATECONSUMER", stream, "g", "c");
  const [consumer] = (await fixture.redis.call("XINFO", "CONSUMERS", stream, "g")) as unknown[][];
  return (consumer ?? []).some((value, i) => i % 2 === 0 && value === "inactive");
}

/** COMMAND DOCS XINFO with the `history` of XINFO CONSUMERS replaced (undefined: removed). */
function withConsumersHistory(xinfoDocs: unknown, history: string[][] | undefined): unknown {
  const copy = JSON.parse(JSON.stringify(xinfoDocs)) as unknown[];
  const docs = copy[1] as unknown[];
  const subcommands = docs[docs.indexOf("subcommands") + 1] as unknown[];
  const consumers = subcommands[subcommands.indexOf("xinfo|consumers") + 1] as unknown[];
  const at = consumers.indexOf("history");
  if (at >= 0) consumers.splice(at, 2);
  if (history !== undefined) consumers.push("history", history);
  return copy;
}

describe("capabilities probed by command", () => {
  it("come from the server's COMMAND DOCS, not its version", async () => {
    const capabilities = await detectCapabilities(fixture.redis);
    const info = await fixture.redis.info("server");
    const valkey = /^server_name:valkey\r?$/mu.test(info);
    if (await consumersReportInactive()) {
      // Redis 7.2+ and Valkey: deleted ids, lag and `inactive`.
      expect(capabilities).toMatchObject({
        product: valkey ? "valkey" : "redis",
        reportsDeletedIds: true,
        groupLag: true,
        consumerInactive: true,
      });
    } else {
      // Redis 7.0 (Debian's, the suite's usual server): deleted ids and lag, no `inactive`.
      expect(capabilities).toMatchObject({
        product: "redis",
        reportsDeletedIds: true,
        groupLag: true,
        consumerInactive: false,
      });
    }
    const version = valkey ? "valkey_version" : "redis_version";
    expect(capabilities.version).toBe(new RegExp(`^${version}:(\\S+)`, "mu").exec(info)?.[1]);

    // This server's docs made to say what the other versions' say. With the 7.2 history entry
    // of XINFO CONSUMERS, `inactive` is found, whatever version the server names (here a
    // made-up Valkey reporting redis_version 7.2.4); without it (7.0), it is not.
    const xautoclaim = await fixture.redis.call("COMMAND", "DOCS", "XAUTOCLAIM");
    const xinfo = await fixture.redis.call("COMMAND", "DOCS", "XINFO");
    const as72 = withConsumersHistory(xinfo, [
      ["7.2.0", "Added the `inactive` field, and changed the meaning of `idle`."],
    ]);
    expect(
      capabilitiesFromDocs(parseServerInfo(INFO.valkey80), { xautoclaim, xinfo: as72 }),
    ).toMatchObject({
      product: "valkey",
      version: "8.0.1",
      consumerInactive: true,
      groupLag: true,
    });
    const as70 = withConsumersHistory(xinfo, undefined);
    expect(
      capabilitiesFromDocs(parseServerInfo(INFO.redis70), { xautoclaim, xinfo: as70 }),
    ).toMatchObject({
      product: "redis",
      version: "7.0.15",
      reportsDeletedIds: true,
      groupLag: true,
      consumerInactive: false,
    });
    // No docs (COMMAND denied by an ACL): what every supported server has, nothing optional.
    expect(capabilitiesFromDocs(parseServerInfo(INFO.redis74), undefined)).toMatchObject({
      reportsDeletedIds: true,
      groupLag: true,
      consumerInactive: false,
    });
  });
});
