import type { Redis } from "ioredis";
import { keySlot } from "../../src/core/keySlot.js";
import { waitFor } from "./waitFor.js";

/** Slot arithmetic and slot-map reads of the test cluster (see redisCluster.ts). */

const SLOTS = 16384;
export const MASTERS = 3;

/** The slot range of master i out of n, as `redis-cli --cluster create` lays them out. */
export function slotRange(i: number, n: number): [number, number] {
  const size = SLOTS / n;
  return [Math.round(i * size), Math.round((i + 1) * size) - 1];
}

/** CLUSTER INFO as a map of its fields. */
export async function clusterInfo(redis: Redis): Promise<Map<string, string>> {
  const text = await redis.call("CLUSTER", "INFO");
  const fields = new Map<string, string>();
  for (const line of String(text).split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

/** The owner's port of every slot, as one node sees it (CLUSTER SLOTS); -1 for none. */
export async function slotOwners(redis: Redis): Promise<Int32Array> {
  const owners = new Int32Array(SLOTS).fill(-1);
  const reply = (await redis.call("CLUSTER", "SLOTS")) as [number, number, [string, number]][];
  for (const [start, end, [, port]] of reply) owners.fill(port, start, end + 1);
  return owners;
}

/**
 * One key name per master, `${prefix}:<n>`, each in the initial slot range of a different master,
 * in master order.
 */
export function keysOnEveryMaster(prefix: string): string[] {
  const keys: (string | undefined)[] = new Array<string | undefined>(MASTERS).fill(undefined);
  for (let n = 0; keys.includes(undefined); n += 1) {
    const key = `${prefix}:${n}`;
    const slot = keySlot(key);
    const index = keys.findIndex((_, i) => {
      const [start, end] = slotRange(i, MASTERS);
      return slot >= start && slot <= end;
    });
    keys[index] ??= key;
  }
  return keys as string[];
}

/** A hash tag whose slot is `slot` (found by search; slots are few). */
export function slotKeyTag(slot: number): string {
  for (let n = 0; ; n += 1) if (keySlot(`s${n}`) === slot) return `s${n}`;
}

/** Waits until every given node reports cluster_state:ok and they agree on every slot's owner. */
export async function waitForOneSlotMap(admins: readonly Redis[]): Promise<void> {
  await waitFor(
    async () => {
      let reference: Int32Array | undefined;
      for (const admin of admins) {
        if ((await clusterInfo(admin)).get("cluster_state") !== "ok") return false;
        const owners = await slotOwners(admin);
        if (owners.includes(-1)) return false;
        if (reference !== undefined && !owners.every((port, s) => port === reference?.[s]))
          return false;
        reference = owners;
      }
      return true;
    },
    { what: "cluster_state:ok and one slot map on every node" },
  );
}

/** Waits until every given replica has its link to its master up. */
export async function waitForReplicasInSync(replicas: readonly Redis[]): Promise<void> {
  await waitFor(
    async () => {
      for (const replica of replicas) {
        const text = String(await replica.call("INFO", "replication"));
        if (!text.includes("master_link_status:up")) return false;
      }
      return true;
    },
    { what: "every replica to be in sync" },
  );
}
