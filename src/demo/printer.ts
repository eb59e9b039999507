/**
 * The demo's whole user interface: one plain line per event, stamped with the seconds since the
 * demo started and the actor that speaks, so the story reads top to bottom like a transcript.
 */
/** Width of "[ 12.3s] consumer-1   ": where the text of every line starts. */
const TEXT_COLUMN = 22;

export class Printer {
  private readonly startedAt = performance.now();

  constructor(private readonly write: (text: string) => void = writeStdout) {}

  line(source: string, text: string): void {
    const seconds = ((performance.now() - this.startedAt) / 1000).toFixed(1).padStart(5);
    this.write(`[${seconds}s] ${source.padEnd(12)} ${text}\n`);
  }

  /** Continuation lines (a digest, a hint) indented under the text column of line(). */
  detail(text: string): void {
    this.write(`${" ".repeat(TEXT_COLUMN)}${text}\n`);
  }
}

function writeStdout(text: string): void {
  // Synchronous for files and pipes on Linux, so nothing is lost when the demo exits.
  process.stdout.write(text);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
