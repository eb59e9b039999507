import type { Table, TargetCheck } from "./table.js";

export interface BenchOptions {
  quick: boolean;
  /** Which daemon executable the child-process scenarios run. */
  cliPath: string;
  /** Progress lines on stderr, so stdout keeps only the tables. */
  log: (message: string) => void;
}

export interface ScenarioResult {
  name: string;
  tables: Table[];
  targets: TargetCheck[];
  raw: unknown;
  seconds?: number;
  /** 1-minute load average before and after: other processes on the machine skew timings. */
  loadAverage?: { before: number; after: number };
}

export type Scenario = (options: BenchOptions) => Promise<ScenarioResult>;
