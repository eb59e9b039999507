import { Redis } from "ioredis";
import { PeriodicTask } from "../../src/core/PeriodicTask.js";
import { diffSlotMaps, nodeState, type NodeState, type SlotHandover } from "./slotHandover.js";

/**
 * A failover the watcher saw: when (host ms, as Sentinel's switches), and whether the nemesis
 * asked for it (a master's kill or CLUSTER FAILOVER) or the Cluster made it alone ("self": a
 * master stalled past cluster-node-timeout on a loaded host, and its replica took over).
 */
export interface ClusterFailover extends SlotHandover {
  at: number;
  cause: "nemesis" | "self";
}

/** A slot migration the watcher saw (never a failover: see slotHandover.ts). */
export interface ClusterMigration extends SlotHandover {
  at: number;
}

/** How often each node is asked for its own line: a failover's drops are judged from its time. */
const EVERY_MS = 250;
/** A stalled node's answer is not waited for past this; its last state stands meanwhile. */
const ANSWER_MS = 1000;

type Slots = readonly (readonly [number, number])[];

const overlaps = (a: Slots, b: SlotHandover["slots"]) =>
  a.some(([first, last]) => b.some(([from, to]) => first <= to && from <= last));

/**
 * Watches which node masters which slots during a Cluster run: every node's own line of CLUSTER
 * NODES on a short cadence, each compared with that node's last answer (diffSlotMaps). Its own
 * connections, so a per-node command of the harness (a kill's WAIT) never holds a look back.
 */
export class ClusterWatch {
  readonly failovers: ClusterFailover[] = [];
  readonly migrations: ClusterMigration[] = [];
  private last = new Map<string, NodeState>();
  /** The looks: one every EVERY_MS, and one asked for runs after any under way. */
  private readonly looks = new PeriodicTask<void>({
    run: () => this.compare(),
    nextDelayMs: () => EVERY_MS,
    onError: () => undefined, // a look that failed leaves each node's last state standing
    overlap: "queue",
  });

  private constructor(
    private readonly clients: readonly Redis[],
    private readonly now: () => number,
  ) {}

  /** Takes the first look, then looks every EVERY_MS until stopped. */
  static async start(ports: readonly number[], now = () => Date.now()): Promise<ClusterWatch> {
    const clients = ports.map((port) => {
      const options = { port, host: "127.0.0.1", protocol: 2 as const, commandTimeout: ANSWER_MS };
      const client = new Redis({ ...options, maxRetriesPerRequest: 1 });
      client.on("error", () => undefined); // nodes are killed on purpose
      return client;
    });
    const watch = new ClusterWatch(clients, now);
    await watch.look();
    watch.looks.start(EVERY_MS);
    return watch;
  }

  /** One look now, after any under way (a fault's end: what it caused is recorded by then). */
  look(): Promise<void> {
    return this.looks.runOnce();
  }

  private async compare(): Promise<void> {
    const texts = await Promise.all(
      this.clients.map((client) => client.call("CLUSTER", "NODES").catch(() => "")),
    );
    const next = new Map(this.last);
    for (const state of texts.flatMap((text) => nodeState(String(text)) ?? [])) {
      next.set(state.id, state);
    }
    const at = this.now();
    const { failovers, migrations } = diffSlotMaps(this.last, next);
    this.last = next;
    this.failovers.push(...failovers.map((f) => ({ ...f, at, cause: "self" as const })));
    this.migrations.push(...migrations.map((m) => ({ ...m, at })));
  }

  /**
   * A fault of the nemesis that fails a master over (its kill, CLUSTER FAILOVER), run: once it
   * ends the watcher looks again, and the failovers of the slots the fault's master served (its
   * outcome's `slots`) seen since it began are the nemesis's doing.
   */
  async requested<T extends { slots?: Slots }>(fault: () => Promise<T>): Promise<T> {
    const since = this.now();
    const outcome = await fault();
    await this.look();
    for (const failover of this.failovers) {
      if (failover.at >= since && overlaps(outcome.slots ?? [], failover.slots)) {
        failover.cause = "nemesis";
      }
    }
    return outcome;
  }

  async stop(): Promise<void> {
    await this.looks.stop();
    for (const client of this.clients) client.disconnect();
  }
}
