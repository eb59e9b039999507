import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { consumerProgram, pythonAvailable, type Program } from "./consumerProgram.js";
import { CHAOS_GROUPS } from "./groups.js";
import { LOCAL_LOG_ENV, WAIT_MS_ENV, type LocalHistory } from "./localHistory.js";

/**
 * How a consumer process behaves, drawn from the seed per consumer (jsPrelude.ts says what each
 * does; the redis-py loop has no hot loop and no heartbeat).
 */
export type Behaviour = "healthy" | "crashy" | "slow" | "heartbeat" | "hot";

const RESTART_DELAY_MS = 200;

/**
 * One consumer process per name, restarted (after a short delay, as a deployment would) whenever
 * it exits; each start gets the next seed of its own sequence.
 */
export class ChaosConsumer {
  starts = 0;
  crashes = 0;
  stderr = "";
  private child: ChildProcess | undefined;
  private stopping = false;

  constructor(
    private readonly program: Program,
    readonly name: string,
    readonly behaviour: Behaviour,
    private readonly seed: number,
    /** REDIS_URL, and on Redis Cluster CHAOS_CLUSTER_NODES (the preludes' chaosClient). */
    private readonly redisEnv: Readonly<Record<string, string>>,
  ) {}

  start(): void {
    if (this.stopping) return;
    this.starts += 1;
    const child = spawn(this.program.command, this.program.args, {
      cwd: this.program.dir,
      env: {
        ...process.env,
        ...this.redisEnv,
        CONSUMER: this.name,
        CHAOS_SEED: String(this.seed + this.starts * 7919),
        CHAOS_BEHAVIOUR: this.behaviour,
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      if (this.stderr.length < 20_000) this.stderr += chunk.toString();
    });
    child.on("exit", (code) => {
      if (code === 3) this.crashes += 1;
      setTimeout(() => this.start(), RESTART_DELAY_MS);
    });
    this.child = child;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
  }
}

const CONSUMERS_PER_GROUP = 3;
/** Drawn for every consumer but the first of each group, which stays healthy. */
const BEHAVIOURS: readonly Behaviour[] = ["crashy", "slow", "heartbeat", "hot", "healthy"];

/**
 * Three consumers per group, each with a behaviour and a seed drawn from `random`; the last of a
 * group whose README loop exists in redis-py runs that one (when python3-redis is installed; the
 * draws are the same either way, a behaviour the Python prelude lacks becomes slow).
 * Written and drawn, not started (startFleet): this goes on while the janitors boot. Each keeps
 * its local log in `local.dir` (localHistory.ts), and WAITs `local.waitMs` after an ack.
 */
export async function prepareFleet(
  random: () => number,
  redisEnv: Readonly<Record<string, string>>,
  local: LocalHistory,
): Promise<{ consumers: ChaosConsumer[]; programs: Program[] }> {
  const cluster = redisEnv.CHAOS_CLUSTER_NODES !== undefined;
  const consumers: ChaosConsumer[] = [];
  const programs: Program[] = [];
  const python = await pythonAvailable();
  for (const group of CHAOS_GROUPS) {
    const js = await consumerProgram(group, "js", cluster);
    const py = group.python && python ? await consumerProgram(group, "python", cluster) : undefined;
    programs.push(js, ...(py === undefined ? [] : [py]));
    for (let i = 0; i < CONSUMERS_PER_GROUP; i += 1) {
      const drawn = BEHAVIOURS[Math.floor(random() * BEHAVIOURS.length)] ?? "healthy";
      let behaviour: Behaviour = i === 0 ? "healthy" : drawn;
      const seed = Math.floor(random() * 2 ** 31);
      const onPython = py !== undefined && i === CONSUMERS_PER_GROUP - 1;
      if (onPython && (behaviour === "hot" || behaviour === "heartbeat")) behaviour = "slow";
      const name = `${group.group}-c${i}${onPython ? "-py" : ""}`;
      const env = {
        ...redisEnv,
        [LOCAL_LOG_ENV]: join(local.dir, `${name}.log`),
        [WAIT_MS_ENV]: String(local.waitMs),
      };
      consumers.push(new ChaosConsumer(onPython ? py : js, name, behaviour, seed, env));
    }
  }
  return { consumers, programs };
}

export function startFleet(consumers: readonly ChaosConsumer[]): void {
  for (const consumer of consumers) consumer.start();
}
