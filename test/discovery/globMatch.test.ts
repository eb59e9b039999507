import { describe, expect, it } from "vitest";
import { compileGlob, globMatch } from "../../src/discovery/globMatch.js";
import { useRedisServer } from "../support/redisServer.js";

/** [pattern, name, matches] */
const CASES: [string, string, boolean][] = [
  ["*", "", true],
  ["*", "anything", true],
  ["tenant:*:events", "tenant:42:events", true],
  ["tenant:*:events", "tenant::events", true],
  ["tenant:*:events", "tenant:42:events:dead", false],
  ["tenant:*:events", "{tenant:42:events}:dead", false],
  ["a*b*c", "aXXbYYc", true],
  ["a*b*c", "aXXbYY", false],
  ["a**c", "abc", true],
  ["*c", "abcbc", true],
  ["h?llo", "hello", true],
  ["h?llo", "hllo", false],
  ["h?llo", "heello", false],
  ["h[ae]llo", "hallo", true],
  ["h[ae]llo", "hillo", false],
  ["h[^e]llo", "hallo", true],
  ["h[^e]llo", "hello", false],
  ["h[a-c]llo", "hbllo", true],
  ["h[a-c]llo", "hdllo", false],
  ["h[c-a]llo", "hbllo", true],
  ["h[\\]]llo", "h]llo", true],
  ["h[\\-]llo", "h-llo", true],
  ["h[a\\-z]llo", "hbllo", false],
  ["h[]llo", "hllo", false],
  ["h[ab", "ha", true],
  ["h[ab", "hab", false],
  ["\\*", "*", true],
  ["\\*", "x", false],
  ["a\\?c", "a?c", true],
  ["a\\?c", "abc", false],
  ["a\\[b]", "a[b]", true],
  ["ab\\", "ab\\", true],
  ["ab\\", "ab", false],
  ["billing", "billing", true],
  ["billing", "billing2", false],
  ["bill*", "billing", true],
  ["*-v[0-9]", "orders-v3", true],
  ["*-v[0-9]", "orders-vx", false],
  ["caf?", "café", false],
  ["caf??", "café", true],
];

describe("Redis glob semantics", () => {
  it.each(CASES)("%j against %j is %s", (pattern, name, expected) => {
    expect(globMatch(pattern, name)).toBe(expected);
  });

  it("compiles a pattern once for many names", () => {
    const matches = compileGlob("tenant:[0-9]*");
    expect(["tenant:1", "tenant:12a", "tenant:x", "other"].filter(matches)).toEqual([
      "tenant:1",
      "tenant:12a",
    ]);
  });

  it("stays linear on a pattern that makes naive backtracking explode", () => {
    const name = "a".repeat(5000);
    // This process's CPU time, not the wall clock: other processes on a busy machine do not
    // count. Not a timing assertion of the product: a guard against exponential blow-up.
    const started = process.cpuUsage();
    expect(globMatch("*a*a*a*a*a*a*a*a*b", name)).toBe(false);
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000).toBeLessThan(5000);
  });
});

describe("agrees with Redis' own matcher (KEYS)", () => {
  const fixture = useRedisServer();

  it("on every case of the table", async () => {
    const { redis } = fixture;
    const names = [...new Set(CASES.map(([, name]) => name).filter((name) => name !== ""))];
    await redis.mset(...names.flatMap((name) => [name, "1"]));
    for (const pattern of new Set(CASES.map(([pattern]) => pattern))) {
      const fromRedis = (await redis.keys(pattern)).sort();
      const fromNode = names.filter(compileGlob(pattern)).sort();
      expect({ pattern, keys: fromNode }).toEqual({ pattern, keys: fromRedis });
    }
  });
});
