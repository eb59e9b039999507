import { describe, expect, it } from "vitest";
import { createProgress } from "../../src/commands/operator/createProgress.js";

function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  const stream = {
    isTTY,
    columns: 100,
    write: (chunk: string) => writes.push(chunk) > 0,
    cursorTo: () => true,
    clearLine: () => true,
    moveCursor: () => true,
    on: () => stream,
    removeListener: () => stream,
  };
  return { stream: stream as unknown as NodeJS.WriteStream, writes };
}

describe("progress", () => {
  it("stays silent when stderr is not a terminal", () => {
    const { stream, writes } = fakeStream(false);
    const progress = createProgress("redrive", stream);
    progress.start(10);
    progress.update(5);
    progress.stop();
    expect(writes).toEqual([]);
  });

  it("draws a bar on a terminal", () => {
    const { stream, writes } = fakeStream(true);
    const progress = createProgress("redrive", stream);
    progress.start(10);
    progress.update(10);
    progress.stop();
    expect(writes.join("")).toContain("redrive");
    expect(writes.join("")).toContain("10/10");
  });
});
