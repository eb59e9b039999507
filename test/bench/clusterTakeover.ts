/**
 * Take-over after kill -9 of the leader on a cluster, for `npm run bench -- --only=c`: two daemon
 * child processes in cluster mode; the standby's time to lead once the leader is killed.
 */
import type { RedisCluster } from "../support/redisCluster.js";
import { waitFor } from "../support/waitFor.js";
import { daemonConfig, httpGet, isLeader, leaderGauge, startDaemonChild } from "./daemonProcess.js";
import type { BenchOptions } from "./scenario.js";
import { fmt } from "./table.js";

export async function takeOverTimes(
  options: BenchOptions,
  cluster: RedisCluster,
  runs: number,
): Promise<number[]> {
  const config = {
    ...daemonConfig(cluster.seedUrl, {
      lease: { ttlMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 },
      groups: [{ stream: "bench:takeover", group: "workers" }],
    }),
    redis: { url: cluster.seedUrl, mode: "cluster", nodes: cluster.seedNodes },
  };
  const times: number[] = [];
  let leader = await startDaemonChild(options.cliPath, config);
  await waitFor(() => isLeader(leader), { timeoutMs: 20_000, what: "a leader" });
  let standby = await startDaemonChild(options.cliPath, config);
  try {
    for (let i = 0; i < runs; i += 1) {
      await waitFor(async () => (await httpGet(`${standby.httpUrl}/readyz`)).status === 200, {
        timeoutMs: 20_000,
        what: "the standby to be ready",
      });
      // A standby exports leader 0 once its lease loop has made an attempt: kill only then.
      const waiting = standby;
      await waitFor(async () => (await leaderGauge(waiting)) === 0, {
        timeoutMs: 20_000,
        what: "the standby to try for the lease",
      });
      const killedAt = performance.now();
      leader.kill("SIGKILL");
      const next = standby;
      await waitFor(() => isLeader(next), { timeoutMs: 20_000, what: "the standby to take over" });
      times.push(performance.now() - killedAt);
      options.log(`  take-over ${i + 1}: ${fmt(times.at(-1) ?? 0, 0)} ms`);
      await leader.stop();
      leader = standby;
      standby = await startDaemonChild(options.cliPath, config);
    }
  } finally {
    await Promise.all([leader.stop(), standby.stop()]);
  }
  return times;
}
