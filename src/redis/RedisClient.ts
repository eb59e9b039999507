import type { Cluster, Redis } from "ioredis";

/** A connection to one server (standalone, through Sentinel) or to a whole Cluster. */
export type RedisClient = Redis | Cluster;
