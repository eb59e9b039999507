import { Redis } from "ioredis";
import type { ChaosCluster } from "./clusterNodes.js";
import { selfViews } from "./clusterSelf.js";

/**
 * Runs `use` on a connection of its own to the node on `port`: the faults' client of a node is
 * blocked while it WAITs, and a command sent on it would queue behind the WAIT.
 */
async function onOwnConnection<T>(port: number, use: (node: Redis) => Promise<T>): Promise<T> {
  const options = { port, host: "127.0.0.1", protocol: 2 as const, lazyConnect: true };
  const node = new Redis({ ...options, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  node.on("error", () => undefined); // a killed master refuses it: the caller's answer is the throw
  try {
    await node.connect();
    return await use(node);
  } finally {
    node.disconnect();
  }
}

/**
 * Cuts a master's replication link while every node keeps answering: its replicas are
 * disconnected and their PSYNC/SYNC refused (ACL) until the returned mend, so WAIT on it blocks.
 * Not SIGSTOP of the replica: the faults ask every node CLUSTER NODES and would hang on it. Not
 * CLIENT PAUSE WRITE on the replica: Redis 7.0 and 7.4 acknowledge (WAIT 1 answers 1) the writes
 * it holds back. SYNC stays refused after the mend: a replica refused PSYNC retries with SYNC, and
 * one that got in that way never acknowledges an offset (WAIT 1 timed out with it online).
 */
export async function cutReplicaLink(port: number): Promise<() => Promise<void>> {
  await onOwnConnection(port, async (master) => {
    await master.call("ACL", "SETUSER", "default", "-psync", "-sync");
    const cut = Number(await master.call("CLIENT", "KILL", "TYPE", "replica"));
    if (cut < 1) throw new Error(`no replica of ${port} connected to cut`);
    const info = String(await master.call("INFO", "replication"));
    if (!info.includes("connected_slaves:0")) throw new Error(`${port}'s replica still linked`);
  });
  return () =>
    onOwnConnection(port, async (master) => {
      await master.call("ACL", "SETUSER", "default", "+psync");
    });
}

/** Whether a client of the node on `port` is blocked in WAIT now (CLIENT LIST: cmd=wait, b). */
export async function blockedInWait(port: number): Promise<boolean> {
  const text = String(await onOwnConnection(port, (node) => node.call("CLIENT", "LIST")));
  return text.split("\n").some((line) => / cmd=wait( |$)/u.test(line) && / flags=\w*b/u.test(line));
}

/** The master on `port` and its replica, as their own CLUSTER NODES lines say now. */
export async function masterAndReplica(cluster: ChaosCluster, port: number) {
  const views = await selfViews(cluster);
  const master = views.find((view) => view.port === port && view.master);
  const replica = views.find((view) => !view.master && view.replicaOf === master?.id);
  const admin = cluster.byPort(master?.port ?? 0)?.client;
  if (!master || !replica || !admin) throw new Error(`no replica of ${port}`);
  return { master, replica, admin };
}

/** A stream's length and last entry's id as a replica serves them (READONLY), or its master. */
export async function streamTip(port: number, stream: string) {
  return onOwnConnection(port, async (reader) => {
    await reader.call("READONLY");
    const [last] = await reader.xrevrange(stream, "+", "-", "COUNT", 1);
    return { length: await reader.xlen(stream), lastId: last?.[0] ?? "" };
  });
}
