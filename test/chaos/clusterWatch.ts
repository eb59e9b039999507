import { Redis } from "ioredis";
import { createConnection } from "node:net";
import { PeriodicTask } from "../../src/core/PeriodicTask.js";
import { masterOfSlot, refusesCommands } from "./clusterDown.js";
import { DownSpans, type DownListener } from "./downSpans.js";
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

/** How a watcher is started: its clock, and the slot of the janitors' lease key if watched. */
export interface WatchOptions {
  now?: () => number;
  /** Whether that slot's master refuses commands is watched too (`down`). */
  leaseSlot?: number;
}

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
  /** When the lease's master refused every command: no janitor could lead (clusterDown.ts). */
  readonly down = new DownSpans();
  private last = new Map<string, NodeState>();
  /** The looks: one every EVERY_MS, and one asked for runs after any under way. */
  private readonly looks = new PeriodicTask<void>({
    run: () => this.compare(),
    nextDelayMs: () => EVERY_MS,
    onError: () => undefined, // a look that failed leaves each node's last state standing
    overlap: "queue",
  });

  private constructor(
    private readonly clients: ReadonlyMap<number, Redis>,
    private readonly now: () => number,
    private readonly leaseSlot: number | undefined,
  ) {}

  /** Takes the first look, then looks every EVERY_MS until stopped. */
  static async start(ports: readonly number[], options: WatchOptions = {}): Promise<ClusterWatch> {
    const clients = new Map(ports.map((port) => [port, nodeClient(port)]));
    const { now = () => Date.now(), leaseSlot } = options;
    const watch = new ClusterWatch(clients, now, leaseSlot);
    try {
      await Promise.all([...clients.values()].map((client) => client.connect()));
    } catch (error) {
      await watch.stop();
      throw error;
    }
    await watch.look();
    watch.looks.start(EVERY_MS);
    return watch;
  }

  /** One look now, after any under way (a fault's end: what it caused is recorded by then). */
  look(): Promise<void> {
    return this.looks.runOnce();
  }

  /** Listens to the lease's master refusing commands, or serving them again. */
  onDown(listener: DownListener): void {
    this.down.onChange(listener);
  }

  private async compare(): Promise<void> {
    const texts = await Promise.all(
      [...this.clients.values()].map((client) => client.call("CLUSTER", "NODES").catch(() => "")),
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
    await this.lookAtLease();
  }

  /** Whether the master of the lease's slot, by the latest states, refuses commands now. */
  private async lookAtLease(): Promise<void> {
    if (this.leaseSlot === undefined) return;
    const port = masterOfSlot(this.last, this.leaseSlot)?.port;
    const client = port === undefined ? undefined : this.clients.get(port);
    if (port === undefined || client === undefined) return;
    const answer = await client.call("CLUSTER", "INFO").catch((error: unknown) => error);
    const refused = answer instanceof Error && (await connectionRefused(port));
    this.down.observe(refusesCommands(answer, refused), this.now());
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
    for (const client of this.clients.values()) client.disconnect();
  }
}

/** Whether a new TCP connection to a node's port is refused (nothing listens: it is killed). */
function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: "127.0.0.1", timeout: ANSWER_MS });
    const end = (refused: boolean) => {
      socket.destroy();
      resolve(refused);
    };
    socket.once("connect", () => end(false));
    socket.once("timeout", () => end(false));
    socket.once("error", (error: NodeJS.ErrnoException) => end(error.code === "ECONNREFUSED"));
  });
}

/**
 * A client of one node. No offline queue: while the node is down a command fails at once, and
 * the look asks whether the node refuses connections, rather than waiting for a reconnection
 * until the command times out (which says nothing).
 */
function nodeClient(port: number): Redis {
  const client = new Redis({
    port,
    host: "127.0.0.1",
    protocol: 2,
    commandTimeout: ANSWER_MS,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: true,
  });
  client.on("error", () => undefined); // nodes are killed on purpose
  return client;
}
