import { timingSafeEqual } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256 } from "../../src/config/httpCredentials.js";
import { matchesAnyDigest, presentedSecret } from "../../src/http/authorizeRequest.js";

/** timingSafeEqual, recording the lengths it was given. */
function recordingCompare(): { compare: (a: Buffer, b: Buffer) => boolean; calls: number[][] } {
  const calls: number[][] = [];
  return {
    calls,
    compare: (a, b) => {
      calls.push([a.length, b.length]);
      return timingSafeEqual(a, b);
    },
  };
}

describe("matchesAnyDigest", () => {
  const lines = ["alice:one", "bob:two", "carol:three"].map(sha256);

  it("compares SHA-256 digests with timingSafeEqual, 32 bytes each side whatever was sent", () => {
    for (const presented of ["", "x", "bob:two", "a".repeat(10_000)]) {
      const { compare, calls } = recordingCompare();
      matchesAnyDigest(presented, lines, compare);
      expect(calls).toEqual([
        [32, 32],
        [32, 32],
        [32, 32],
      ]);
    }
  });

  it("compares every line, the first matching too: the time does not tell which one matched", () => {
    const { compare, calls } = recordingCompare();
    expect(matchesAnyDigest("alice:one", lines, compare)).toBe(true);
    expect(calls).toHaveLength(3);
  });

  it("matches exactly: another user, another password or a prefix do not", () => {
    expect(matchesAnyDigest("carol:three", lines)).toBe(true);
    expect(matchesAnyDigest("carol:thre", lines)).toBe(false);
    expect(matchesAnyDigest("carol:one", lines)).toBe(false);
    expect(matchesAnyDigest("dave:one", lines)).toBe(false);
  });
});

describe("presentedSecret", () => {
  const basic = (text: string): string => `Basic ${Buffer.from(text).toString("base64")}`;

  it("takes the Bearer token, whatever the case of the scheme's name", () => {
    for (const scheme of ["Bearer", "bearer", "BEARER"]) {
      expect(presentedSecret(`${scheme} t0k3n`, "Bearer")).toBe("t0k3n");
    }
  });

  it("refuses a missing header, another scheme, a token without scheme or two tokens", () => {
    for (const header of [
      undefined,
      "",
      "t0k3n",
      "Bearer",
      "Bearert0k3n",
      "Token t0k3n",
      "Bearer a b",
    ]) {
      expect(presentedSecret(header, "Bearer")).toBeUndefined();
    }
    expect(presentedSecret(basic("u:p"), "Bearer")).toBeUndefined();
  });

  it("decodes Basic user:password; a password may hold colons", () => {
    expect(presentedSecret(basic("alice:one"), "Basic")).toBe("alice:one");
    expect(presentedSecret(basic("alice:a:b"), "Basic")).toBe("alice:a:b");
    expect(presentedSecret(basic("alice:one").replace("Basic", "basic"), "Basic")).toBe(
      "alice:one",
    );
  });

  it("refuses malformed Basic: no colon, no user, not base64, or a Bearer token", () => {
    for (const header of [basic("alice"), basic(":one"), "Basic !!!", "Basic", "Bearer t0k3n"]) {
      expect(presentedSecret(header, "Basic")).toBeUndefined();
    }
  });
});
