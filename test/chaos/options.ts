import { parseArgs } from "node:util";

export interface ParsedCommand {
  seed: number;
  topology: "standalone" | "sentinel" | "cluster";
  durationMs: number;
  outDir: string;
  selfTest: boolean;
  /** With --self-test: run only these planted defects (and not the unchanged build). */
  defects: string[];
}

/** A usage error: the run exits 2 with this message. */
export class UsageError extends Error {}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

function duration(text: string): number {
  const match = /^(\d+)(ms|s|m)?$/u.exec(text);
  if (match === null) throw new UsageError(`--duration: expected 60s, 2m or 45000ms, got ${text}`);
  return Number(match[1]) * (UNITS[match[2] ?? "ms"] ?? 1);
}

/** `npm run chaos -- [--seed N] [--duration 60s] [--topology standalone] [--out DIR] [--self-test]` */
export function parseCommand(argv: readonly string[]): ParsedCommand {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      seed: { type: "string", default: "1" },
      duration: { type: "string", default: "60s" },
      topology: { type: "string", default: "standalone" },
      out: { type: "string", default: "chaos-out" },
      "self-test": { type: "boolean", default: false },
      defect: { type: "string", multiple: true, default: [] },
    },
    strict: true,
  });
  const topology = values.topology;
  if (topology !== "standalone" && topology !== "sentinel" && topology !== "cluster") {
    throw new UsageError(`--topology: expected standalone, sentinel or cluster, got ${topology}`);
  }
  const seed = Number(values.seed);
  if (!Number.isSafeInteger(seed) || seed < 0) {
    throw new UsageError(`--seed: expected a whole number >= 0, got ${values.seed}`);
  }
  return {
    seed,
    topology,
    durationMs: duration(values.duration),
    outDir: values.out,
    selfTest: values["self-test"],
    defects: values.defect,
  };
}
