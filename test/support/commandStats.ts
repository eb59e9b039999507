import type { Redis } from "ioredis";

/** One line of `INFO commandstats`: calls and total microseconds of a command (or subcommand). */
interface CommandStat {
  calls: number;
  usec: number;
}

/** By command name as Redis writes it: `xclaim`, `xinfo|stream`. */
export type CommandStats = Record<string, CommandStat>;

/** The one parser of `INFO commandstats`, for the tests and the bench. */
export function parseCommandStats(info: string): CommandStats {
  const stats: CommandStats = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gmu)) {
    const [, name = "", calls = "0", usec = "0"] = match;
    stats[name] = { calls: Number(calls), usec: Number(usec) };
  }
  return stats;
}

/** How many times the server ran each of `names` since its start (or its last RESETSTAT). */
export async function commandCalls(
  redis: Redis,
  names: readonly string[],
): Promise<Record<string, number>> {
  const stats = parseCommandStats(await redis.info("commandstats"));
  return Object.fromEntries(names.map((name) => [name, stats[name]?.calls ?? 0]));
}
