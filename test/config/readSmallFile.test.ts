import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSmallFile } from "../../src/config/readSmallFile.js";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sj-read-small-file-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("readSmallFile", () => {
  it("allocates for the file, not for the limit (issue 33, item 11: a 4 MiB buffer per start-up)", async () => {
    const path = join(dir, "small.json");
    await writeFile(path, '{"groups":[]}\n');
    // 8 GiB is more than one Buffer may hold: a buffer of the limit's size cannot be made.
    expect(await readSmallFile(path, 2 ** 33)).toEqual({ ok: true, text: '{"groups":[]}\n' });
  });

  it("reads a file whose size stat does not tell (/proc), and still stops past the limit", async () => {
    const read = await readSmallFile("/proc/self/status", 1024 * 1024);
    expect(read.ok && read.text.startsWith("Name:")).toBe(true);
    const bounded = await readSmallFile("/proc/self/status", 16);
    expect(bounded.ok ? "read" : bounded.problem).toMatch(
      /^a file of at most 0.015625 KiB \(found 17 bytes\)$/u,
    );
  });

  it("refuses a file over the limit from its size", async () => {
    const path = join(dir, "big.txt");
    await writeFile(path, "x".repeat(1025));
    expect(await readSmallFile(path, 1024)).toEqual({
      ok: false,
      problem: "a file of at most 1 KiB (found 1025 bytes)",
    });
  });
});
