import type { Redis } from "ioredis";
import { setTimeout as delay } from "node:timers/promises";
import { errorMessage, type Printer } from "./printer.js";

/**
 * A demo actor: one loop on its own connection (blocking reads would hold up anyone sharing it).
 * stop() asks the loop to end at its next step, waits for it, then closes the connection, so no
 * command is ever cut off half-way and no promise is left dangling.
 */
export abstract class Actor {
  private readonly stopController = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    readonly name: string,
    protected readonly redis: Redis,
    protected readonly printer: Printer,
  ) {}

  protected get stopping(): boolean {
    return this.stopController.signal.aborted;
  }

  start(): void {
    this.loop ??= this.run().catch((error: unknown) => {
      // Once stopping, a failed command is the connection closing under us: not news.
      if (!this.stopping) this.say(`stopped after an error: ${errorMessage(error)}`);
    });
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    await this.loop;
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  protected say(text: string): void {
    this.printer.line(this.name, text);
  }

  /** Sleeps, waking early when the demo stops. */
  protected async pause(ms: number): Promise<void> {
    await delay(ms, undefined, { signal: this.stopController.signal }).catch(() => undefined);
  }

  protected abstract run(): Promise<void>;
}
