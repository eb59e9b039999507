import { readFileSync } from "node:fs";
import type { RedisClient } from "../redis/RedisClient.js";
import { classified } from "../redis/redisErrors.js";

/**
 * The Lua scripts, one file each under ./lua, registered once per connection with ioredis
 * `defineCommand` (EVALSHA with a fallback to EVAL after a server restart or failover).
 * Callers use the typed module named after each script (./sweepPage.ts, ./safeTrim.ts, ...).
 */
const SCRIPTS = {
  sjSweepPage: "sweepPage.lua",
  sjFenceLease: "fenceLease.lua",
  sjMoveFencingToken: "moveFencingToken.lua",
  sjRedriveDeadLetters: "redriveDeadLetters.lua",
  sjPurgeDeadLetters: "purgeDeadLetters.lua",
  sjReapConsumers: "reapConsumers.lua",
  sjSafeTrim: "safeTrim.lua",
  sjReadGroupStats: "readGroupStats.lua",
  sjEnsureRetryLane: "ensureRetryLane.lua",
  sjTrimRetryLane: "trimRetryLane.lua",
  sjEntriesExist: "entriesExist.lua",
  sjIndexDeadLetters: "indexDeadLetters.lua",
  sjAppendEvents: "appendEvents.lua",
  sjRestoreDeadLetters: "restoreDeadLetters.lua",
  sjStartRedriveTask: "startRedriveTask.lua",
  sjRedriveTaskBatch: "redriveTaskBatch.lua",
  sjCancelRedriveTask: "cancelRedriveTask.lua",
  sjRedriveTaskDirectory: "redriveTaskDirectory.lua",
} as const;

export type ScriptName = keyof typeof SCRIPTS;
export type ScriptArg = string | number | Buffer;

/** Scripts take their key count first, because the fence key is optional. */
type ScriptCommands = Record<
  ScriptName,
  (numberOfKeys: number, ...args: ScriptArg[]) => Promise<unknown>
>;

export type ScriptedRedis = RedisClient & ScriptCommands;

/** The arguments of one script call: the key count, the keys, then ARGV. */
export type ScriptCall = [numberOfKeys: number, ...args: ScriptArg[]];

/** Builds a ScriptCall from its KEYS and ARGV. */
export function scriptCall(keys: readonly string[], argv: readonly ScriptArg[]): ScriptCall {
  return [keys.length, ...keys, ...argv];
}

/**
 * `--- @include "<name>"` on a line of its own (as in BullMQ): replaced by ./lua/includes/<name>.lua
 * when the script is loaded, each include once per script (a later directive for the same name
 * is dropped), includes may include others. Shared Lua (the fence check, stream-id helpers,
 * metadata names) is written once this way; it lands where the directive stands, so a script
 * places it before the code that uses it, outside any per-entry loop.
 */
const INCLUDE = /^--- @include "([A-Za-z0-9_-]+)"[ \t]*$/gmu;

function readLua(path: string): string {
  return readFileSync(new URL(`./lua/${path}`, import.meta.url), "utf8");
}

function resolveIncludes(source: string, included: Set<string>): string {
  return source.replace(INCLUDE, (_, name: string) => {
    if (included.has(name)) return `-- (${name} included above)`;
    included.add(name);
    const include = readLua(`includes/${name}.lua`).replace(/\n$/u, "");
    return resolveIncludes(include, included);
  });
}

const loaded = new Map<string, string>();

/** The source of ./lua/<file> as Redis runs it: with its includes in place. */
export function loadScript(file: string): string {
  let source = loaded.get(file);
  if (source === undefined) {
    source = resolveIncludes(readLua(file), new Set());
    loaded.set(file, source);
  }
  return source;
}

export function registerScripts(redis: RedisClient): ScriptedRedis {
  for (const [name, file] of Object.entries(SCRIPTS)) {
    if (!(name in redis)) redis.defineCommand(name, { lua: loadScript(file) });
  }
  return redis as ScriptedRedis;
}

/**
 * One call of a script: the typed modules' only way to run one. An error Redis answers with is
 * classified here, at the boundary (a RedisError with its code, see src/redis/redisErrors.ts).
 */
export async function callScript(
  redis: ScriptedRedis,
  name: ScriptName,
  call: ScriptCall,
): Promise<unknown> {
  try {
    return await redis[name](...call);
  } catch (error) {
    throw classified(error);
  }
}
