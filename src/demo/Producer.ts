import { Actor } from "./Actor.js";
import { DEMO_STREAM } from "./demoConfig.js";

const MAX_LENGTH = 10_000;
const CUSTOMERS = ["ada", "grace", "linus", "margaret", "ken", "barbara"] as const;

/** Adds orders to the stream: a few on demand to set the scene, then one every 100-200 ms. */
export class Producer extends Actor {
  private nextOrder = 1;

  /** Adds one ordinary order and returns its id. */
  async addOrder(): Promise<string> {
    const order = this.nextOrder++;
    const customer = CUSTOMERS[order % CUSTOMERS.length] ?? "ada";
    const amount = (10 + ((order * 7919) % 9000) / 100).toFixed(2);
    return this.add(["order", String(order), "customer", customer, "amount", amount]);
  }

  /** An order no consumer can process: its amount does not parse, however often it is retried. */
  async addPoisonOrder(): Promise<string> {
    const order = this.nextOrder++;
    return this.add(["order", String(order), "customer", "mallory", "amount", "twelve"]);
  }

  private async add(fields: string[]): Promise<string> {
    // Capped, so a demo left running against someone's Redis stays small. The cap is far above
    // anything pending here, so this trim never makes ghosts; the retention job's does, on purpose.
    return String(await this.redis.xadd(DEMO_STREAM, "MAXLEN", "~", MAX_LENGTH, "*", ...fields));
  }

  protected async run(): Promise<void> {
    this.say("adds an order every 100-200 ms from now on");
    while (!this.stopping) {
      await this.addOrder();
      await this.pause(100 + Math.random() * 100);
    }
  }
}
