import { describe, expect, it } from "vitest";
import { describeServer } from "../../src/daemon/describeServer.js";
import type { RedisClient } from "../../src/redis/RedisClient.js";

/** A client that answers INFO server with the given text, and nothing else. */
function answering(info: string): RedisClient {
  return { info: () => Promise.resolve(info) } as unknown as RedisClient;
}

/** `INFO server` as each server prints it (the lines that matter, in their order, CRLF as sent). */
const INFO = {
  redis70:
    "# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_build_id:1b9bb0d1b2cd5c1b\r\nredis_mode:standalone\r\n",
  redis74Cluster:
    "# Server\r\nredis_version:7.4.1\r\nredis_git_sha1:00000000\r\nredis_git_dirty:1\r\nredis_build_id:4bd2a1a4e9c7d5c5\r\nredis_mode:cluster\r\n",
  // Valkey 8 renamed redis_mode to server_mode.
  valkey80:
    "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\nredis_git_sha1:00000000\r\nredis_git_dirty:1\r\nredis_build_id:fbf587cb0e4bc320\r\nserver_mode:standalone\r\n",
  valkey80Cluster:
    "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\nserver_mode:cluster\r\n",
};

describe("the server named by the start-up line", () => {
  it("is Redis with its version and mode", async () => {
    expect(await describeServer(answering(INFO.redis70))).toEqual({
      product: "Redis",
      version: "7.0.15",
      mode: "standalone",
    });
    expect(await describeServer(answering(INFO.redis74Cluster))).toEqual({
      product: "Redis",
      version: "7.4.1",
      mode: "cluster",
    });
  });

  it("is Valkey with its own version (not the pinned redis_version) and its server_mode", async () => {
    expect(await describeServer(answering(INFO.valkey80))).toEqual({
      product: "Valkey",
      version: "8.0.1",
      mode: "standalone",
    });
    expect(await describeServer(answering(INFO.valkey80Cluster))).toEqual({
      product: "Valkey",
      version: "8.0.1",
      mode: "cluster",
    });
  });
});
