import type { Redis } from "ioredis";
import type { Violation } from "./checker.js";
import { SLOW_COMMAND_US } from "./servers.js";

export interface SlowCommand {
  id: number;
  durationUs: number;
  command: string;
  client: string;
}

/**
 * SLOWLOG GET, kept across Redis restarts and failovers (the nemesis reads it before each). An
 * entry is known by its time, id, duration and command: a restarted server counts ids from 0
 * again, and failovers back and forth read the same server's log more than once.
 */
export class SlowCommands {
  private readonly seen = new Map<string, SlowCommand>();

  async collect(redis: Redis): Promise<void> {
    const entries = (await redis.slowlog("GET", 1024)) as unknown[][];
    for (const entry of entries) {
      const [id, at, durationUs, args, , client] = entry as [
        number,
        number,
        number,
        unknown[],
        string,
        string,
      ];
      const command = args.slice(0, 3).map(String).join(" ");
      const known = `${at}:${id}:${durationUs}:${command}`;
      this.seen.set(known, { id, durationUs, command, client: client ?? "" });
    }
  }

  get all(): SlowCommand[] {
    return [...this.seen.values()];
  }

  /**
   * The janitor's own commands (its connections are named stream-janitor:*) over the bound: the
   * larger of SLOW_COMMAND_US and twice the slowest command of any other client (the harness's
   * own small scripts and reads), so that a host starving Redis of CPU is not taken for a slow
   * janitor command.
   */
  violations(): Violation[] {
    const janitor = (slow: SlowCommand) => slow.client.startsWith("stream-janitor:");
    const noise = Math.max(
      0,
      ...this.all.filter((slow) => !janitor(slow)).map((s) => s.durationUs),
    );
    const bound = Math.max(SLOW_COMMAND_US, 2 * noise);
    return this.all
      .filter((slow) => janitor(slow) && slow.durationUs > bound)
      .map((slow) => ({
        invariant: "slow-command",
        detail: `${slow.command} by ${slow.client} ran ${slow.durationUs} us (bound ${bound} us: ${SLOW_COMMAND_US} us, or twice the slowest other command, ${noise} us)`,
      }));
  }
}
