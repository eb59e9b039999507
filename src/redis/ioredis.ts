import { createRequire } from "node:module";
import type * as IoRedis from "ioredis";

/**
 * ioredis, loaded with require(): src/ takes its classes from here, never from an `import` of
 * "ioredis" (eslint no-restricted-imports; types may still be imported from it). ioredis is
 * CommonJS: imported, Node 20 loads each of the files it requires as a job of the ES module
 * loader, and that cost `inspect` more start-up than any other module it loads (225 M
 * instructions, about half of ioredis' loading; test/bench/RESULTS.md "CLI start-up, issue 33
 * item 11"). require() gives the same module object, so `instanceof` holds across both.
 */
const ioredis = createRequire(import.meta.url)("ioredis") as typeof IoRedis;

export const Redis = ioredis.Redis;
export type Redis = IoRedis.Redis;
export const Cluster = ioredis.Cluster;
export type Cluster = IoRedis.Cluster;
