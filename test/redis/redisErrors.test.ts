import { describe, expect, it } from "vitest";
import {
  codeOfMessage,
  errorInReply,
  RedisError,
  redisErrorOf,
} from "../../src/redis/redisErrors.js";
import { classifySweepError } from "../../src/sweep/sweepErrors.js";

function replyError(message: string): Error {
  const error = new Error(message);
  error.name = "ReplyError";
  return error;
}

describe("Redis errors, classified once", () => {
  it.each([
    ["FENCED the lease is not held by this process", "FENCED"],
    ["NOGROUP No such key 'orders' or consumer group 'billing'", "NOGROUP"],
    ["WRONGTYPE Operation against a key holding the wrong kind of value", "WRONGTYPE"],
    ["NOPERM User janitor has no permissions to run the 'xinfo' command", "NOPERM"],
    ["ERR no such key", "NOSUCHKEY"],
    ["OOM command not allowed when used memory > 'maxmemory'", "OTHER"],
    ["FENCEDX something", "OTHER"],
  ])("%s", (message, code) => {
    expect(codeOfMessage(message)).toBe(code);
    const error = redisErrorOf(replyError(message));
    expect(error).toBeInstanceOf(RedisError);
    expect(error).toMatchObject({ code, message });
  });

  it("leaves errors Redis did not answer alone", () => {
    expect(redisErrorOf(new Error("Connection is closed."))).toBeUndefined();
  });

  it("counts a script's failure reported in its reply as kind script, not redis", () => {
    const failure = errorInReply("XADD failed: something unforeseen (user_script:12)");
    expect(classifySweepError(failure).kind).toBe("script");
    expect(classifySweepError(errorInReply("WRONGTYPE key x holds a list")).kind).toBe(
      "wrong-type",
    );
  });
});
