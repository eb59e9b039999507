import { describe, expect, it } from "vitest";
import { inWindow } from "../../src/core/inWindow.js";

/** A task the test settles by hand: no timers, the order is the test's. */
function deferred(): {
  promise: Promise<number>;
  resolve: (n: number) => void;
  reject: (e: Error) => void;
} {
  let resolve!: (n: number) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<number>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("inWindow (the scrape's script calls in flight)", () => {
  it("keeps at most `width` running, and gives results in index order whatever order they end in", async () => {
    const tasks = Array.from({ length: 10 }, deferred);
    const started: number[] = [];
    const all = inWindow(10, 3, (index) => {
      started.push(index);
      return (tasks[index] as ReturnType<typeof deferred>).promise;
    });
    await turn();
    expect(started).toEqual([0, 1, 2]);
    tasks[2]?.resolve(20);
    await turn();
    expect(started).toEqual([0, 1, 2, 3]);
    for (const [index, task] of [...tasks.entries()].reverse()) task.resolve(index * 10);
    expect(await all).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
  });

  it("starts nothing new once a task failed, and rejects with that failure", async () => {
    const tasks = Array.from({ length: 6 }, deferred);
    const started: number[] = [];
    const all = inWindow(6, 2, (index) => {
      started.push(index);
      return (tasks[index] as ReturnType<typeof deferred>).promise;
    });
    await turn();
    tasks[0]?.reject(new Error("connection lost"));
    await expect(all).rejects.toThrow("connection lost");
    tasks[1]?.resolve(1);
    await turn();
    expect(started).toEqual([0, 1]);
  });
});
