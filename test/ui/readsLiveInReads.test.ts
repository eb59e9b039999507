import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const UI = new URL("../../src/ui/", import.meta.url);
const READS = new URL("../../src/reads/", import.meta.url);

/** The files of a folder with the Redis commands they send themselves (`redis.call(`, `redis.xrangeBuffer(` ...). */
function commandsSentIn(folder: URL): { file: string; sends: string[] }[] {
  return readdirSync(folder)
    .filter((file) => file.endsWith(".ts"))
    .map((file) => ({
      file,
      sends: [...readFileSync(new URL(file, folder), "utf8").matchAll(/\bredis\.(\w+)\(/gu)].map(
        (match) => match[1] ?? "",
      ),
    }))
    .filter(({ sends }) => sends.length > 0);
}

describe("the web console's reads live in src/reads/", () => {
  it("no module of src/ui/ sends a Redis command itself: it calls a read of src/reads/", () => {
    expect(commandsSentIn(UI)).toEqual([]);
  });

  it("src/reads/ holds one module per read of the group page, the lease and the dead letters", () => {
    const files = commandsSentIn(READS).map(({ file }) => file);
    expect(files).toEqual(
      expect.arrayContaining([
        "readConsumers.ts",
        "readPendingPage.ts",
        "readGroupEvents.ts",
        "readPageDeadLetters.ts",
        "readLeaseState.ts",
      ]),
    );
  });
});
