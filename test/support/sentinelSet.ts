import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort, spawnRedisServer } from "../../src/demo/spawnRedisServer.js";
import { waitFor } from "./waitFor.js";

export const MASTER_NAME = "janitor-primary";
/** Short enough that a failover takes a second or two, long enough not to flap on a busy CI. */
const DOWN_AFTER_MS = 1000;
const FAILOVER_TIMEOUT_MS = 3000;

interface DataNode {
  port: number;
  child: ChildProcess;
}

/**
 * One primary, one replica and three Sentinels on loopback, for one test FILE (they take about
 * two seconds to agree). Data nodes are not persisted; Sentinels rewrite their own config files
 * in a temporary directory.
 */
export class SentinelSet {
  private readonly clients: Redis[] = [];
  private readonly killOnExit = (): void => {
    for (const child of this.children()) child.kill("SIGKILL");
  };

  private constructor(
    private readonly dir: string,
    readonly nodes: DataNode[],
    readonly sentinels: DataNode[],
  ) {
    process.once("exit", this.killOnExit);
  }

  static async start(): Promise<SentinelSet> {
    const dir = await mkdtemp(join(tmpdir(), "sj-sentinel-"));
    const nodes: DataNode[] = [];
    const sentinels: DataNode[] = [];
    const set = new SentinelSet(dir, nodes, sentinels);
    try {
      const primaryPort = await freePort();
      nodes.push({ port: primaryPort, child: await spawnDataNode(dir, primaryPort, []) });
      const replicaPort = await freePort();
      const replicaOf = ["--replicaof", "127.0.0.1", String(primaryPort)];
      nodes.push({ port: replicaPort, child: await spawnDataNode(dir, replicaPort, replicaOf) });
      await set.waitUntilReplicated(replicaPort);
      for (let i = 0; i < 3; i += 1) {
        const port = await freePort();
        sentinels.push({ port, child: await spawnSentinel(dir, port, primaryPort) });
      }
      await set.waitUntilHealthy();
      return set;
    } catch (error) {
      await set.stop();
      throw error;
    }
  }

  /** "127.0.0.1:port" of each Sentinel, for redis.nodes. */
  get sentinelNodes(): string[] {
    return this.sentinels.map((s) => `127.0.0.1:${s.port}`);
  }

  /** A client of a Sentinel (default: the first). */
  sentinel(index = 0): Redis {
    const port = this.sentinels[index]?.port ?? 0;
    return this.track(new Redis({ host: "127.0.0.1", port, protocol: 2, lazyConnect: false }));
  }

  /** The primary's port as the Sentinels say it. */
  async primaryPort(sentinel = 0): Promise<number> {
    const client = this.sentinel(sentinel);
    try {
      const reply = (await client.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)) as [
        string,
        string,
      ];
      return Number(reply[1]);
    } finally {
      client.disconnect();
    }
  }

  /** A direct client of the data node on `port` (closed by stop()). */
  node(port: number): Redis {
    const redis = new Redis({ host: "127.0.0.1", port, protocol: 2, maxRetriesPerRequest: 1 });
    redis.on("error", () => undefined);
    return this.track(redis);
  }

  async primary(): Promise<Redis> {
    return this.node(await this.primaryPort());
  }

  /**
   * Resolves with the new primary's port when `+switch-master` is published: the moment of the
   * promotion as the Sentinels announce it. Subscribe BEFORE triggering the failover.
   */
  async watchSwitch(): Promise<{ switched: Promise<{ port: number; at: number }> }> {
    const subscriber = this.sentinel(1);
    await subscriber.subscribe("+switch-master");
    // Wrapped in an object: an async function returning a bare promise would wait for it.
    const switched = new Promise<{ port: number; at: number }>((resolve) => {
      subscriber.on("message", (_channel: string, message: string) => {
        // "<name> <old-ip> <old-port> <new-ip> <new-port>"
        const parts = message.split(" ");
        if (parts[0] !== MASTER_NAME) return;
        const at = performance.now();
        subscriber.disconnect();
        resolve({ port: Number(parts[4]), at });
      });
    });
    return { switched };
  }

  /** Every Sentinel names the same primary, knows the replica and the other two Sentinels. */
  async waitUntilHealthy(timeoutMs = 30_000): Promise<void> {
    await waitFor(
      async () => {
        const ports = await Promise.all(this.sentinels.map((_, i) => this.primaryPort(i)));
        if (new Set(ports).size !== 1) return false;
        const replica = this.nodes.find((n) => n.port !== ports[0] && n.child.exitCode === null);
        if (replica === undefined) return false;
        if (!(await this.isReplicating(replica.port))) return false;
        for (let i = 0; i < this.sentinels.length; i += 1) {
          const client = this.sentinel(i);
          try {
            const peers = (await client.call("SENTINEL", "SENTINELS", MASTER_NAME)) as unknown[];
            const replicas = (await client.call("SENTINEL", "REPLICAS", MASTER_NAME)) as string[][];
            const healthy = replicas.filter((r) => !flagsOf(r).includes("down"));
            if (peers.length !== this.sentinels.length - 1 || healthy.length < 1) return false;
          } finally {
            client.disconnect();
          }
        }
        return true;
      },
      {
        timeoutMs,
        intervalMs: 100,
        what: "the Sentinels to agree on a healthy primary and replica",
      },
    );
  }

  /** SIGKILL a data node (no persistence: its data is gone). */
  async kill(port: number): Promise<void> {
    const node = this.nodes.find((n) => n.port === port);
    if (node === undefined || node.child.exitCode !== null) return;
    const exited = once(node.child, "exit");
    node.child.kill("SIGKILL");
    await exited;
  }

  async stop(): Promise<void> {
    for (const client of this.clients) client.disconnect();
    await Promise.all(
      this.children().map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, "exit");
        child.kill("SIGKILL");
        await exited;
      }),
    );
    process.off("exit", this.killOnExit);
    await rm(this.dir, { recursive: true, force: true });
  }

  private async waitUntilReplicated(replicaPort: number): Promise<void> {
    await waitFor(() => this.isReplicating(replicaPort), {
      timeoutMs: 20_000,
      what: "the replica to sync",
    });
  }

  private async isReplicating(port: number): Promise<boolean> {
    const client = this.node(port);
    try {
      return (await client.info("replication")).includes("master_link_status:up");
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  }

  private children(): ChildProcess[] {
    return [...this.nodes, ...this.sentinels].map((n) => n.child);
  }

  private track(client: Redis): Redis {
    this.clients.push(client);
    return client;
  }
}

function flagsOf(flat: string[]): string {
  const index = flat.indexOf("flags");
  return index >= 0 ? (flat[index + 1] ?? "") : "";
}

async function spawnDataNode(dir: string, port: number, extra: string[]): Promise<ChildProcess> {
  const nodeDir = await mkdtemp(join(dir, `node-${port}-`));
  // repl-diskless-sync-delay 0: a replica (the demoted primary too) resyncs at once.
  const args = ["--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0", ...extra];
  return spawnRedisServer({ port, dir: nodeDir, extraArgs: args });
}

async function spawnSentinel(
  dir: string,
  port: number,
  primaryPort: number,
): Promise<ChildProcess> {
  const path = join(dir, `sentinel-${port}.conf`);
  await writeFile(
    path,
    [
      `port ${port}`,
      "bind 127.0.0.1",
      `dir ${dir}`,
      `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${primaryPort} 2`,
      `sentinel down-after-milliseconds ${MASTER_NAME} ${DOWN_AFTER_MS}`,
      `sentinel failover-timeout ${MASTER_NAME} ${FAILOVER_TIMEOUT_MS}`,
      `sentinel parallel-syncs ${MASTER_NAME} 1`,
      "",
    ].join("\n"),
  );
  return startSentinelProcess(path);
}

/** `redis-server <config> --sentinel`, once it monitors its master (its output says so). */
export async function startSentinelProcess(configPath: string): Promise<ChildProcess> {
  const child = spawn("redis-server", [configPath, "--sentinel"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const onData = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  await waitFor(() => output.includes("+monitor master") || child.exitCode !== null, {
    timeoutMs: 10_000,
    what: "the Sentinel to start",
  });
  if (child.exitCode !== null) throw new Error(`redis-server --sentinel exited:\n${output}`);
  child.stdout.off("data", onData);
  child.stderr.off("data", onData);
  child.stdout.resume();
  child.stderr.resume();
  return child;
}
