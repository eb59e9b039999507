import type { Logger } from "pino";

type Closer = () => unknown;

/**
 * Teardown in reverse order of construction (LIFO). A step that fails is logged and the rest
 * still run; run() is idempotent, and steps registered while it runs are run too.
 */
export class TeardownStack {
  private readonly steps: { name: string; close: Closer }[] = [];
  private running: Promise<void> | undefined;

  constructor(private readonly logger: Logger) {}

  push(name: string, close: Closer): void {
    this.steps.push({ name, close });
  }

  get stopping(): boolean {
    return this.running !== undefined;
  }

  run(): Promise<void> {
    this.running ??= this.drain();
    return this.running;
  }

  private async drain(): Promise<void> {
    for (let step = this.steps.pop(); step !== undefined; step = this.steps.pop()) {
      try {
        await step.close();
      } catch (error) {
        this.logger.error({ err: error, step: step.name }, "teardown step failed");
      }
    }
  }
}
