import { join } from "node:path";
import { freePort } from "../../src/demo/spawnRedisServer.js";
import { portMapLaunch } from "./portMap.js";
import type { ChaosLink } from "./proxy.js";
import { pollUntil } from "./quiescence.js";
import { JanitorReplica, writeJanitorConfig } from "./servers.js";
import type { JanitorLink, Topology } from "./topology.js";

const REPLICAS = 3;

/** The janitor replicas, each reaching Redis through its own link, and the operator's config. */
export interface JanitorSet {
  janitors: JanitorReplica[];
  links: ChaosLink[];
  /** The operator's configuration: the same groups, straight to Redis. */
  operatorConfig: string;
  /** Rewrites a replica's configuration (the other variant each time) and sends it SIGHUP. */
  reconfigure(index: number): Promise<string>;
  close(): Promise<void>;
}

export async function startJanitors(
  cli: string,
  outDir: string,
  topology: Topology,
): Promise<JanitorSet> {
  const janitors: JanitorReplica[] = [];
  const links: JanitorLink[] = [];
  const dir = join(outDir, "config");
  for (let index = 0; index < REPLICAS; index += 1) {
    const link = await topology.linkJanitor();
    const port = await freePort();
    const config = await writeJanitorConfig(dir, link.redis, port);
    const log = join(outDir, `janitor-${index}.log`);
    const launch = await portMapLaunch(dir, link.portMap);
    janitors.push(new JanitorReplica(index, cli, config, port, log, launch));
    links.push(link);
  }
  for (const janitor of janitors) janitor.start();
  // The schedule starts once one of them leads, so that its first faults have a leader to hit.
  // A minute: at nice 19 on a host at load 25, three janitors took over 30 s to boot and lead.
  const leads = async () =>
    (await Promise.all(janitors.map((j) => j.metric("stream_janitor_leader")))).includes(1);
  if (!(await pollUntil(leads, 60_000)))
    throw new Error("chaos: no janitor took the lease within 60 s");
  const variants = janitors.map(() => false);
  return {
    janitors,
    links: links.map(({ link }) => link),
    operatorConfig: await writeJanitorConfig(dir, topology.operatorRedis, await freePort()),
    reconfigure: async (index) => {
      const janitor = janitors[index];
      const link = links[index];
      if (janitor === undefined || link === undefined) return "no such janitor";
      variants[index] = !variants[index];
      await writeJanitorConfig(dir, link.redis, janitor.httpPort, variants[index]);
      janitor.signal("SIGHUP");
      return variants[index] ? "sweep 350 ms, minIdleMs 1200" : "sweep 200 ms, minIdleMs 1000";
    },
    close: async () => {
      await Promise.all(janitors.map((janitor) => janitor.kill()));
      await Promise.all(links.map(({ link }) => link.close()));
    },
  };
}

/** Every janitor back, running and linked before the quiet period. */
export function healJanitors(set: JanitorSet): void {
  for (const link of set.links) {
    link.setDelay(0);
    link.heal();
  }
  for (const janitor of set.janitors) {
    if (janitor.stopped) janitor.signal("SIGCONT");
    if (!janitor.running) janitor.start();
  }
}
