import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { classifySweepError, SWEEP_ERROR_CODES } from "../../src/sweep/sweepErrors.js";
import { parseSweepPageReply } from "../../src/scripts/sweepPage.js";
import { integerReply, replyFields } from "../../src/scripts/scriptReplies.js";

const script = readFileSync(
  new URL("../../src/scripts/lua/sweepPage.lua", import.meta.url),
  "utf8",
);

function replyError(message: string): Error {
  const error = new Error(message);
  error.name = "ReplyError";
  return error;
}

describe("sweep error codes", () => {
  it("maps every code the script refuses with, and the script header lists the same codes", () => {
    const raised = new Set(
      [...script.matchAll(/refuse\('([A-Z]+)'/gu)].map((match) => match[1] ?? ""),
    );
    const passedOn = ["NOGROUP"]; // Redis' own, returned as is by the script
    expect([...raised, ...passedOn].sort()).toEqual(Object.keys(SWEEP_ERROR_CODES).sort());
    const header = /Errors, nothing changed[^\n]*\n\s*([A-Z, ]+)\n/u.exec(script)?.[1] ?? "";
    expect(header.split(/,\s*/u).sort()).toEqual(Object.keys(SWEEP_ERROR_CODES).sort());
  });

  it.each([
    ["FENCED the lease is not held by this process", "fenced"],
    ["NOSTREAM no such stream: orders", "missing-stream"],
    ["NOGROUP No such key 'orders' or consumer group 'billing'", "missing-group"],
    ["WRONGTYPE orders holds a string, not a stream", "wrong-type"],
    ["IDSEXHAUSTED stream {orders}:dead has used up its ids", "ids-exhausted"],
    ["CONSUMERBUSY consumer stream-janitor of group billing holds entries", "consumer-collision"],
    [
      "WRONGTYPE Operation against a key holding the wrong kind of value script: 0123, on @user_script:12.",
      "wrong-type",
    ],
  ])("classifies %s", (message, kind) => {
    expect(classifySweepError(replyError(message)).kind).toBe(kind);
  });

  it("keeps the message after the code, and tells Redis replies from connection problems", () => {
    expect(classifySweepError(replyError("NOSTREAM no such stream: orders")).message).toBe(
      "no such stream: orders",
    );
    expect(classifySweepError(replyError("OOM command not allowed")).kind).toBe("script");
    expect(classifySweepError(new Error("Connection is closed.")).kind).toBe("redis");
    expect(classifySweepError(replyError("FENCEDX something")).kind).toBe("script");
  });
});

describe("a script reply that does not parse", () => {
  /** What `parse` threw, classified as a failed sweep is. */
  function classifiedFailure(parse: () => unknown) {
    try {
      parse();
    } catch (error) {
      return classifySweepError(error);
    }
    throw new Error("the reply parsed");
  }

  it.each([
    ["an odd-length sweepPage reply", () => parseSweepPageReply(["cursor"])],
    ["a sweepPage reply without a cursor", () => parseSweepPageReply(["examined", 1])],
    [
      "a sweepPage reply with a count that is not a number",
      () => parseSweepPageReply(["cursor", "0-0", "examined", "many"]),
    ],
    ["a reply shorter than its fields", () => replyFields("safeTrim", [1], 3)],
    ["a reply that should be an integer", () => integerReply("fenceLease", "OK")],
  ])("is kind `script` (not a Redis outage), and says so: %s", (_, parse) => {
    const failure = classifiedFailure(parse);
    expect(failure.kind).toBe("script");
    expect(failure.message).toMatch(/reply did not parse/u);
  });
});
