import type { History } from "./history.js";
import type { LocalRecord } from "./localHistory.js";

/**
 * Hand-built histories for the checker's tests across failovers (pure logic): what Redis held at
 * the end, and what the parties' local logs say Redis answered. `jobs` is read by one group,
 * `workers` (requeue).
 */
export function redisHistory(parts: Partial<History> = {}): History {
  return {
    produced: {},
    acks: [],
    deliveries: [],
    stalls: [],
    purged: [],
    redriven: [],
    deadLetters: [],
    sourceBodies: {},
    ...parts,
  };
}

export const KEY = "jobs:1";
export const PRODUCED = `${KEY} jobs 1000-0`;
export const held = { produced: { [KEY]: "jobs 1000-0" }, sourceBodies: { [KEY]: "body=00" } };
export const ack = (ms: number, consumer = "workers-c0") =>
  `${KEY} workers jobs 1000-0 ${consumer} ${ms}`;
export const delivery = (ms: number) => `${KEY} workers jobs 1000-0 ${ms} new workers-c0`;

export function local(kind: LocalRecord["kind"], record: string, at: number, confirmed?: boolean) {
  return { kind, record, at, confirmed };
}
