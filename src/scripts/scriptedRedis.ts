import { readFileSync } from "node:fs";
import type { RedisClient } from "../redis/RedisClient.js";

/**
 * The Lua scripts, one file each under ./scripts, registered once per connection with
 * ioredis `defineCommand` (EVALSHA with a fallback to EVAL after a server restart or failover).
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
} as const;

type ScriptName = keyof typeof SCRIPTS;
export type ScriptArg = string | number | Buffer;

/** Scripts take their key count first, because the fence key is optional. */
export type ScriptCommands = Record<
  ScriptName,
  (numberOfKeys: number, ...args: ScriptArg[]) => Promise<unknown>
>;

export type ScriptedRedis = RedisClient & ScriptCommands;

function readScript(file: string): string {
  return readFileSync(new URL(`./lua/${file}`, import.meta.url), "utf8");
}

export function registerScripts(redis: RedisClient): ScriptedRedis {
  for (const [name, file] of Object.entries(SCRIPTS)) {
    if (!(name in redis)) redis.defineCommand(name, { lua: readScript(file) });
  }
  return redis as ScriptedRedis;
}
