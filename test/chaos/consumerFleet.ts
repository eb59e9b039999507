import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import type { Program } from "./consumerProgram.js";

/** How a consumer process behaves, drawn from the seed per consumer. */
export type Behaviour = "healthy" | "crashy";

const CRASH_RATE = 0.01;
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
    private readonly redisUrl: string,
  ) {}

  start(): void {
    if (this.stopping) return;
    this.starts += 1;
    const crashRate = this.behaviour === "crashy" ? CRASH_RATE : 0;
    const child = spawn(this.program.command, this.program.args, {
      cwd: this.program.dir,
      env: {
        ...process.env,
        REDIS_URL: this.redisUrl,
        CONSUMER: this.name,
        CHAOS_SEED: String(this.seed + this.starts * 7919),
        CHAOS_CRASH_RATE: String(crashRate),
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
