import type { JanitorConfig } from "../../src/core/configTypes.js";
import type { RedisCluster } from "./redisCluster.js";
import { testConfig } from "./testConfig.js";

/** testConfig() for the test cluster: `redis.mode: cluster`, its seed url and seed nodes. */
export function clusterTestConfig(
  cluster: RedisCluster,
  prefix: string,
  groups: Parameters<typeof testConfig>[2] = [],
  overrides: Parameters<typeof testConfig>[3] = {},
): JanitorConfig {
  const config = testConfig(cluster.seedUrl, prefix, groups, overrides);
  return { ...config, redis: { ...config.redis, mode: "cluster", nodes: [...cluster.seedNodes] } };
}
