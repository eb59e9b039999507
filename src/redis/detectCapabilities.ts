import { asArray, kvList } from "./replies.js";
import type { RedisClient } from "./RedisClient.js";

type ServerProduct = "redis" | "valkey";

/** Which server answers, as `INFO server` says it. */
export interface ServerIdentity {
  product: ServerProduct;
  /** The product's own version: Valkey pins redis_version at 7.2.4 whatever its release. */
  version: string;
  /** redis_version as reported (for Valkey, the Redis version it is compatible with). */
  redisVersion: string;
}

/** What the connected server can do, found out at start-up by probing commands, never assumed. */
export interface RedisCapabilities extends ServerIdentity {
  /** XAUTOCLAIM reports the ids of deleted entries (and drops them from the PEL). */
  reportsDeletedIds: boolean;
  /** XINFO GROUPS has entries-read and lag. */
  groupLag: boolean;
  /** XINFO CONSUMERS has `inactive` (time since the last successful interaction). */
  consumerInactive: boolean;
}

export class UnsupportedRedisError extends Error {
  override name = "UnsupportedRedisError";
}

/** The oldest release of each product the janitor runs on (README "Limits"). */
const MINIMUM_VERSIONS: Readonly<Record<ServerProduct, string>> = {
  redis: "7.0.0",
  valkey: "7.2.0",
};

const PRODUCT_NAMES: Readonly<Record<ServerProduct, string>> = { redis: "Redis", valkey: "Valkey" };

function parseVersion(version: string): [number, number, number] {
  const [major = 0, minor = 0, patch = 0] = version
    .split(".")
    .map((part) => Number.parseInt(part, 10) || 0);
  return [major, minor, patch];
}

function compareVersions(a: string, b: string): number {
  const [x, y] = [parseVersion(a), parseVersion(b)];
  for (let i = 0; i < 3; i += 1) {
    const difference = (x[i] ?? 0) - (y[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

function infoField(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:([^\\r\\n]*)`, "mu").exec(info)?.[1]?.trim();
}

/** `INFO server` text → product and version. Throws UnsupportedRedisError when it has neither. */
export function parseServerInfo(info: string): ServerIdentity {
  const redisVersion = infoField(info, "redis_version");
  const valkeyVersion = infoField(info, "valkey_version");
  const isValkey = infoField(info, "server_name") === "valkey" || valkeyVersion !== undefined;
  const version = isValkey ? (valkeyVersion ?? redisVersion) : redisVersion;
  if (version === undefined || redisVersion === undefined) {
    throw new UnsupportedRedisError("could not read the server version from INFO server");
  }
  return { product: isValkey ? "valkey" : "redis", version, redisVersion };
}

/** Refuses servers older than the minimum, naming the version found and the one needed. */
export function checkSupported(server: ServerIdentity): void {
  const minimum = MINIMUM_VERSIONS[server.product];
  if (compareVersions(server.version, minimum) >= 0) return;
  const name = PRODUCT_NAMES[server.product];
  throw new UnsupportedRedisError(
    `${name} ${server.version} is not supported: stream-janitor needs ${name} >= ` +
      `${minimum.replace(/\.0$/u, "")} (supported: Redis >= 7.0, Valkey >= 7.2)`,
  );
}

/** The `history` notes of one command's `COMMAND DOCS` entry (subcommands as `xinfo|groups`). */
function commandHistory(docsReply: unknown, command: string): string[] {
  const [name, parts] = command.toLowerCase().split("|");
  const flat = asArray(docsReply, "COMMAND DOCS");
  for (let i = 0; i + 1 < flat.length; i += 2) {
    if (String(flat[i]).toLowerCase() !== name) continue;
    let docs = kvList(flat[i + 1], "COMMAND DOCS");
    if (parts !== undefined) {
      const sub = kvList(docs.get("subcommands") ?? [], "COMMAND DOCS subcommands");
      const entry = [...sub].find(([key]) => key.toLowerCase() === command.toLowerCase());
      if (entry === undefined) return [];
      docs = kvList(entry[1], "COMMAND DOCS");
    }
    const history = docs.get("history");
    if (!Array.isArray(history)) return [];
    return history.map((item) => (Array.isArray(item) ? item.map(String).join(" ") : ""));
  }
  return [];
}

/**
 * Features from the server's own command documentation (`COMMAND DOCS`, 7.0+), which both Redis
 * and Valkey keep with each change of a reply: the version string says nothing reliable about
 * Valkey. Without the docs (an ACL that denies COMMAND), the features every supported server has
 * are assumed and the optional ones are off.
 */
export function capabilitiesFromDocs(
  server: ServerIdentity,
  docs: { xautoclaim: unknown; xinfo: unknown } | undefined,
): RedisCapabilities {
  if (docs === undefined) {
    return { ...server, reportsDeletedIds: true, groupLag: true, consumerInactive: false };
  }
  const mentions = (reply: unknown, command: string, word: RegExp): boolean =>
    commandHistory(reply, command).some((note) => word.test(note));
  return {
    ...server,
    reportsDeletedIds: mentions(docs.xautoclaim, "xautoclaim", /deleted/iu),
    groupLag: mentions(docs.xinfo, "xinfo|groups", /`lag`/u),
    consumerInactive: mentions(docs.xinfo, "xinfo|consumers", /`inactive`/u),
  };
}

export async function detectCapabilities(redis: RedisClient): Promise<RedisCapabilities> {
  const server = parseServerInfo(await redis.info("server"));
  checkSupported(server);
  const commandInfo = (await redis.call("COMMAND", "INFO", "XAUTOCLAIM")) as unknown[];
  if (!Array.isArray(commandInfo) || commandInfo[0] === null || commandInfo[0] === undefined) {
    throw new UnsupportedRedisError(
      `${PRODUCT_NAMES[server.product]} ${server.version} has no XAUTOCLAIM: stream-janitor needs it`,
    );
  }
  const docs = await Promise.all([
    redis.call("COMMAND", "DOCS", "XAUTOCLAIM"),
    redis.call("COMMAND", "DOCS", "XINFO"),
  ]).then(
    ([xautoclaim, xinfo]) => ({ xautoclaim, xinfo }),
    () => undefined,
  );
  const capabilities = capabilitiesFromDocs(server, docs);
  if (!capabilities.reportsDeletedIds || !capabilities.groupLag) {
    throw new UnsupportedRedisError(
      `${PRODUCT_NAMES[server.product]} ${server.version} lacks XAUTOCLAIM deleted ids or ` +
        "XINFO GROUPS lag: stream-janitor needs Redis >= 7.0 or Valkey >= 7.2",
    );
  }
  return capabilities;
}
