import { Cluster, type Redis } from "./ioredis.js";
import { keySlot } from "../core/keySlot.js";
import type { RedisClient } from "./RedisClient.js";

/**
 * The connection that carries the commands about `key`: the client itself on one server; on
 * Redis Cluster the connection to the master serving the key's slot (the client's slot map).
 * For connection-scoped commands about a key, such as WAIT (it counts the writes of the
 * connection it is sent on), which a Cluster client would send to any node.
 */
export function connectionOfKey(redis: RedisClient, key: string): Redis {
  if (!(redis instanceof Cluster)) return redis;
  const owner = redis.slots[keySlot(key)]?.[0];
  const node = redis
    .nodes("master")
    .find((candidate) => `${candidate.options.host}:${candidate.options.port}` === owner);
  if (node === undefined) throw new Error(`no master known for the slot of ${key}`);
  return node;
}
