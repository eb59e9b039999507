import { keySlot } from "../../src/core/keySlot.js";
import type { ChaosCluster } from "./clusterNodes.js";
import { SOURCE_STREAMS } from "./groups.js";

/** The slot of one source stream drawn by `pick`, and the master serving it. */
export async function drawnMaster(cluster: ChaosCluster, pick: number) {
  const stream = SOURCE_STREAMS[pick % SOURCE_STREAMS.length] ?? "";
  const slot = keySlot(stream);
  return { stream, slot, port: await cluster.owner(slot) };
}
