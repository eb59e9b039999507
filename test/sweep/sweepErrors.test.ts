import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { classifySweepError, SWEEP_ERROR_CODES } from "../../src/sweep/sweepErrors.js";

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
