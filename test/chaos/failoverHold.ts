import type { ChaosCluster } from "./clusterNodes.js";
import { flagsFailing } from "./clusterSelf.js";
import { pollUntil } from "./quiescence.js";

/** How long the flags a blocked master raised may take to clear (2 node timeouts, and a margin). */
const CLEAR_MS = 30_000;

const setNoFailover = async (cluster: ChaosCluster, value: "yes" | "no") => {
  const config = ["CONFIG", "SET", "cluster-replica-no-failover", value] as const;
  await Promise.all(cluster.clients().map((node) => node.call(...config).catch(() => undefined)));
};

/**
 * Holds back the replicas' own failovers for a slot migration, and returns its release. MIGRATE
 * blocks the source (RESTORE the target) while it moves a key: a long run's stream of hundreds of
 * MiB takes 6-10 s on a loaded host, past the 3 s node timeout, and the other masters then flag
 * it failed and its replica takes its slots over, in the middle of the migration (the migration
 * fault is a migration: failovers are faults of their own). The release waits for the flags to
 * clear first, or a replica whose master is still flagged would fail it over then.
 */
export async function holdFailovers(cluster: ChaosCluster): Promise<() => Promise<string>> {
  await setNoFailover(cluster, "yes");
  return async () => {
    const clear = async () => {
      const texts = await Promise.all(
        cluster.clients().map((node) => node.call("CLUSTER", "NODES")),
      );
      return !texts.some((text) => flagsFailing(String(text)));
    };
    const cleared = await pollUntil(clear, CLEAR_MS);
    await setNoFailover(cluster, "no");
    return cleared ? "" : `; nodes still flagged failing ${CLEAR_MS} ms after it`;
  };
}
