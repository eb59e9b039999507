import type { Lock } from "redlock";
import type { AcquireResult } from "../../src/lease/LeaseLock.js";
import type { LeaseHolder } from "../../src/core/leaseHolder.js";
import type { LeaseLockPort } from "../../src/lease/types.js";

/** How extend() answers: at once, "not ours" at once, or only when the test says (pending). */
export type ExtendAnswer = "renewed" | "taken" | "pending";

interface PendingExtend {
  lock: Lock;
  resolve: (lock: Lock | undefined) => void;
  reject: (error: Error) => void;
}

/**
 * An in-memory lease lock (client-go tests its elector against a fake lock the same way): one
 * holder value, a token counter, and renewals the test answers when it wants, so the lease's
 * timing is tested on fake timers without Redis.
 */
export class FakeLeaseLock implements LeaseLockPort {
  /** The value holding the key; undefined while free. */
  heldBy: string | undefined;
  token = 0;
  extendAnswer: ExtendAnswer = "renewed";
  readonly calls: string[] = [];
  readonly pending: PendingExtend[] = [];
  private values = 0;

  acquire(): Promise<AcquireResult> {
    this.calls.push("acquire");
    if (this.heldBy !== undefined) return Promise.resolve({ status: "held" });
    this.values += 1;
    this.heldBy = `value-${this.values}`;
    this.token += 1;
    return Promise.resolve({
      status: "acquired",
      lock: fakeLock(this.heldBy),
      fencingToken: this.token,
    });
  }

  extend(lock: Lock): Promise<Lock | undefined> {
    this.calls.push("extend");
    if (this.extendAnswer === "taken" || this.heldBy !== lock.value) {
      return Promise.resolve(undefined);
    }
    if (this.extendAnswer === "renewed") return Promise.resolve(fakeLock(lock.value));
    return new Promise((resolve, reject) => this.pending.push({ lock, resolve, reject }));
  }

  /** Answers the oldest pending renewal: renewed while the key still holds its value. */
  answerOldest(): void {
    const oldest = this.pending.shift();
    if (oldest === undefined) throw new Error("no pending renewal");
    oldest.resolve(this.heldBy === oldest.lock.value ? fakeLock(oldest.lock.value) : undefined);
  }

  /** Fails every pending renewal (a connection that dropped): stop() then need not wait. */
  failPending(): void {
    for (const pending of this.pending.splice(0)) pending.reject(new Error("connection lost"));
  }

  release(lock: Lock): Promise<boolean> {
    this.calls.push("release");
    if (this.heldBy !== lock.value) return Promise.resolve(false);
    this.heldBy = undefined;
    return Promise.resolve(true);
  }

  holder(): Promise<LeaseHolder | "unknown" | undefined> {
    return Promise.resolve(this.heldBy === undefined ? undefined : "unknown");
  }

  keyState(): Promise<{ value: string | null; pttlMs: number }> {
    return Promise.resolve({
      value: this.heldBy ?? null,
      pttlMs: this.heldBy === undefined ? -2 : 1000,
    });
  }

  moveTokenPast(value: string, fenceSeen: number): Promise<number | undefined> {
    if (this.heldBy !== value) return Promise.resolve(undefined);
    this.token = Math.max(this.token, fenceSeen) + 1;
    return Promise.resolve(this.token);
  }
}

function fakeLock(value: string): Lock {
  return { value } as unknown as Lock;
}
