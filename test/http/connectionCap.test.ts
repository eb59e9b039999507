import { describe, expect, it } from "vitest";
import {
  ASSUMED_OPEN_FILES_LIMIT,
  connectionCap,
  MAX_HTTP_CONNECTIONS,
  reservedDescriptors,
} from "../../src/http/connectionCap.js";
import { parseOpenFilesLimit } from "../../src/http/openFilesLimit.js";

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            1024                 524288               files
Max locked memory         8388608              8388608              bytes
`;

describe("connectionCap", () => {
  it("keeps a quarter of the limit (at least 64, at most half) for everything but HTTP", () => {
    expect(connectionCap(1024)).toBe(768);
    expect(connectionCap(256)).toBe(192);
    expect(connectionCap(200)).toBe(136);
    expect(connectionCap(100)).toBe(50);
    expect(connectionCap(1)).toBe(1);
    for (const limit of [1, 2, 64, 100, 128, 256, 1000, 1024, 1365, 4096]) {
      const reserve = reservedDescriptors(limit);
      expect(connectionCap(limit) + reserve, `limit ${limit}`).toBeLessThanOrEqual(limit);
      expect(reserve, `limit ${limit}`).toBeGreaterThanOrEqual(Math.min(64, Math.floor(limit / 2)));
    }
  });

  it("never goes above the fixed ceiling, and assumes a common limit when it cannot read one", () => {
    expect(connectionCap(1_048_576)).toBe(MAX_HTTP_CONNECTIONS);
    expect(connectionCap(Number.POSITIVE_INFINITY)).toBe(MAX_HTTP_CONNECTIONS);
    expect(connectionCap(undefined)).toBe(connectionCap(ASSUMED_OPEN_FILES_LIMIT));
    expect(connectionCap(undefined)).toBe(768);
  });
});

describe("parseOpenFilesLimit", () => {
  it("reads the soft limit of /proc/self/limits", () => {
    expect(parseOpenFilesLimit(LIMITS)).toBe(1024);
    expect(parseOpenFilesLimit(LIMITS.replace("1024  ", "unlimited"))).toBe(
      Number.POSITIVE_INFINITY,
    );
    expect(parseOpenFilesLimit("Max cpu time unlimited unlimited seconds\n")).toBeUndefined();
    expect(parseOpenFilesLimit("Max open files  -1  -1  files\n")).toBeUndefined();
  });
});
