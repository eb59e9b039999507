import type { Redis } from "ioredis";
import {
  parseCommandStats as parseAllCommandStats,
  type CommandStats,
} from "../support/commandStats.js";

export type { CommandStats } from "../support/commandStats.js";

/** Commands the bench itself issues to read or reset statistics; never counted. */
const BOOKKEEPING = new Set([
  "info",
  "config|resetstat",
  "config|set",
  "config|get",
  "slowlog|get",
  "slowlog|reset",
  "multi",
  "exec",
  "ping",
  "client|setname",
  "select",
]);

/** `INFO commandstats` without the bench's own bookkeeping commands. */
function parseCommandStats(info: string): CommandStats {
  return Object.fromEntries(
    Object.entries(parseAllCommandStats(info)).filter(([name]) => !BOOKKEEPING.has(name)),
  );
}

export async function resetStats(redis: Redis): Promise<void> {
  await redis.call("CONFIG", "RESETSTAT");
}

export async function readCommandStats(redis: Redis): Promise<CommandStats> {
  return parseCommandStats(await redis.info("commandstats"));
}

/** Commands a script (EVAL/EVALSHA) may call: their time is already inside the script's time. */
const SCRIPT_COMMANDS = new Set([
  "type",
  "get",
  "time",
  "exists",
  "xinfo|stream",
  "xinfo|consumers",
  "hgetall",
  "hset",
  "pexpire",
  "xpending",
  "xautoclaim",
  "xadd",
  "xack",
  "xclaim",
  "xgroup|delconsumer",
]);

const SCRIPT_ENTRY_POINTS = new Set(["eval", "evalsha", "evalsha_ro", "eval_ro", "fcall"]);

export interface ServerTime {
  /** Server microseconds of the top-level commands (scripts count whole, inner commands not). */
  totalUsec: number;
  /** Microseconds inside EVAL/EVALSHA. */
  scriptUsec: number;
  scriptCalls: number;
  /** Microseconds of the commands called from scripts (a subset of scriptUsec). */
  innerUsec: number;
  /** Per command: calls and usec. */
  commands: CommandStats;
}

/**
 * Splits command statistics into what the server spent on behalf of the client. When scripts
 * ran, the commands they call are counted both in their own line and in the script's: the
 * script's line is the one that counts, the inner lines explain where its time went.
 */
export function serverTime(stats: CommandStats, scripted: boolean): ServerTime {
  let totalUsec = 0;
  let scriptUsec = 0;
  let scriptCalls = 0;
  let innerUsec = 0;
  for (const [name, stat] of Object.entries(stats)) {
    if (SCRIPT_ENTRY_POINTS.has(name)) {
      scriptUsec += stat.usec;
      scriptCalls += stat.calls;
      totalUsec += stat.usec;
    } else if (scripted && SCRIPT_COMMANDS.has(name)) {
      innerUsec += stat.usec;
    } else {
      totalUsec += stat.usec;
    }
  }
  return { totalUsec, scriptUsec, scriptCalls, innerUsec, commands: stats };
}

/** One entry of SLOWLOG GET: its command name (lower case, with subcommand) and duration. */
export interface SlowlogEntry {
  /** Increasing id: the order in which the commands finished. */
  id: number;
  command: string;
  durationUs: number;
  /** Called from a script (the Lua client has no address: `?:0`). */
  inner: boolean;
}

export function parseSlowlog(reply: unknown): SlowlogEntry[] {
  if (!Array.isArray(reply)) return [];
  const entries: SlowlogEntry[] = [];
  for (const raw of reply as unknown[]) {
    if (!Array.isArray(raw)) continue;
    const durationUs = Number(raw[2]);
    const args = Array.isArray(raw[3]) ? (raw[3] as unknown[]).map(String) : [];
    const name = (args[0] ?? "?").toLowerCase();
    const sub = ["xgroup", "xinfo", "config", "slowlog", "script", "client"].includes(name)
      ? `${name}|${(args[1] ?? "").toLowerCase()}`
      : name;
    entries.push({ id: Number(raw[0]), command: sub, durationUs, inner: String(raw[4]) === "?:0" });
  }
  return entries.sort((a, b) => a.id - b.id);
}

export function isBookkeeping(command: string): boolean {
  return BOOKKEEPING.has(command);
}

/** CPU seconds the redis-server process has used (user + system, all threads). */
export async function readRedisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info("cpu");
  const field = (name: string): number =>
    Number(new RegExp(`^${name}:([\\d.]+)`, "mu").exec(info)?.[1] ?? Number.NaN);
  return field("used_cpu_user") + field("used_cpu_sys");
}
