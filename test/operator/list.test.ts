import { describe, expect, it } from "vitest";
import { listDeadLetters } from "../../src/reads/listDeadLetters.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { addDeadLetters, originalFields } from "./deadLetterFixtures.js";

const fixture = useRedisServer();

/** How a listing shows original fields: text when valid UTF-8, else base64 of the bytes. */
function shown(n: number): [string, string][] {
  const flat = originalFields(n);
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const value = flat[i + 1] ?? Buffer.alloc(0);
    const text = value.toString("utf8");
    pairs.push([
      flat[i]?.toString() ?? "",
      Buffer.from(text, "utf8").equals(value) ? text : `base64:${value.toString("base64")}`,
    ]);
  }
  return pairs;
}

describe("dlq list", () => {
  it("shows the group's newest dead letters, newest last, with metadata and exact fields", async () => {
    const stream = uniquePrefix("list");
    const group = groupConfig(stream);
    const dead = group.deadLetterStream;
    const spec = { stream, deadLetterStream: dead, count: 2 };
    // Interleaved with another group's dead letters in the shared dead-letter stream.
    await addDeadLetters(fixture.redis, { ...spec, group: "workers", firstOriginal: 1 });
    await addDeadLetters(fixture.redis, { ...spec, group: "audit", firstOriginal: 10 });
    await addDeadLetters(fixture.redis, {
      ...spec,
      group: "workers",
      firstOriginal: 20,
      reason: "action",
      layout: "metadata-last",
    });
    await addDeadLetters(fixture.redis, { ...spec, group: "audit", firstOriginal: 30 });

    const listed = await listDeadLetters(fixture.redis, group, 3);
    expect(listed.map((letter) => letter.metadata["x-original-id"])).toEqual([
      "1000-2",
      "1000-20",
      "1000-21",
    ]);
    const ids = listed.map((letter) => letter.id);
    expect([...ids].sort()).toEqual(ids);
    const newest = listed.at(-1);
    expect(newest?.metadata).toMatchObject({
      "x-original-stream": stream,
      "x-original-group": "workers",
      "x-dead-letter-reason": "action",
      "x-delivery-count": "5",
      "x-last-consumer": "crashed-consumer",
    });
    // The original fields alone, in order, whatever side the metadata was written on.
    expect(newest?.fields).toEqual(shown(21));
    expect(listed[0]?.fields).toEqual(shown(2));

    expect(await listDeadLetters(fixture.redis, group, 100)).toHaveLength(4);
    expect(await listDeadLetters(fixture.redis, { ...group, group: "nobody" }, 10)).toEqual([]);
  });

  it("finds the group's dead letters behind more than a page of other groups'", async () => {
    const stream = uniquePrefix("list-deep");
    const group = groupConfig(stream);
    const dead = group.deadLetterStream;
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: dead,
      count: 2,
    });
    await addDeadLetters(fixture.redis, {
      stream,
      group: "audit",
      deadLetterStream: dead,
      count: 2500,
      firstOriginal: 100,
    });
    const listed = await listDeadLetters(fixture.redis, group, 10);
    expect(listed.map((letter) => letter.metadata["x-original-id"])).toEqual(["1000-1", "1000-2"]);
  });
});
