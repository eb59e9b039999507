import type { RedisClient } from "../redis/RedisClient.js";

/** What the start-up line says about the server: product, version, mode. */
export interface ServerDescription {
  /** `Redis` or `Valkey` (Valkey pins redis_version at 7.2.4 and says who it is elsewhere). */
  product: string;
  version: string;
  /** INFO's redis_mode (Valkey 8: server_mode): standalone, sentinel or cluster. */
  mode: string;
}

function field(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:(\\S+)`, "mu").exec(info)?.[1];
}

export async function describeServer(redis: RedisClient): Promise<ServerDescription> {
  const info = await redis.info("server");
  const valkey = field(info, "server_name") === "valkey";
  return {
    product: valkey ? "Valkey" : "Redis",
    version:
      (valkey ? field(info, "valkey_version") : undefined) ??
      field(info, "redis_version") ??
      "unknown",
    mode: field(info, "server_mode") ?? field(info, "redis_mode") ?? "standalone",
  };
}
