import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { ConfigError } from "./ConfigError.js";
import type { RedisConfig } from "../core/configTypes.js";

/**
 * The redis.* rules that span several keys, and the files they name: each file is read now, at
 * start-up, so a missing or unreadable one exits 78 naming its key rather than failing every
 * connection attempt later. Fills `sentinelPassword` from `sentinelPasswordFile`.
 */
export async function checkRedisSettings(redis: RedisConfig): Promise<void> {
  checkRedisRules(redis);
  if (redis.sentinelPasswordFile !== "") {
    redis.sentinelPassword = await readSecretFile(
      "redis.sentinelPasswordFile",
      redis.sentinelPasswordFile,
      "the Sentinels' password",
    );
  }
  await checkPemFile("redis.tls.caFile", redis.tls.caFile, "certificate");
  await checkPemFile("redis.tls.certFile", redis.tls.certFile, "certificate");
  await checkPemFile("redis.tls.keyFile", redis.tls.keyFile, "private key");
}

/** The redis.* rules that need no file: topology (sentinel, cluster) and TLS settings. */
export function checkRedisRules(redis: RedisConfig): void {
  checkTopology(redis);
  checkTlsRules(redis);
}

function checkTopology(redis: RedisConfig): void {
  if (redis.mode === "cluster") {
    checkClusterTopology(redis);
  } else if (redis.mode === "sentinel") {
    if (redis.nodes.length === 0) {
      const expected = 'at least one Sentinel ("host:port") when redis.mode is sentinel';
      throw new ConfigError("redis.nodes", redis.nodes, expected);
    }
    if (redis.masterName === "") {
      const expected = "the name the Sentinels monitor the master under (SENTINEL MASTERS)";
      throw new ConfigError("redis.masterName", redis.masterName, expected);
    }
    if (redis.url.startsWith("unix:")) {
      const expected = "redis:// or rediss:// in sentinel mode (the Sentinels name the master)";
      throw new ConfigError("redis.url", redis.url, expected);
    }
  } else if (redis.nodes.length > 0 || redis.masterName !== "") {
    const key = redis.nodes.length > 0 ? "redis.nodes" : "redis.masterName";
    const value = redis.nodes.length > 0 ? redis.nodes : redis.masterName;
    throw new ConfigError(key, value, "empty unless redis.mode is sentinel or cluster");
  }
}

/** Cluster: `url` is one seed node (`nodes` more); the cluster tells the client the rest. */
function checkClusterTopology(redis: RedisConfig): void {
  if (redis.masterName !== "") {
    throw new ConfigError(
      "redis.masterName",
      redis.masterName,
      "empty unless redis.mode is sentinel",
    );
  }
  if (redis.url.startsWith("unix:")) {
    const expected = "redis:// or rediss:// in cluster mode (a seed node the others can name)";
    throw new ConfigError("redis.url", redis.url, expected);
  }
  // Redis Cluster serves database 0 only; SELECT n fails on every node.
  const db = new URL(redis.url).pathname.replace(/^\//u, "");
  if (db !== "" && db !== "0") {
    const expected = "no database, or /0, in cluster mode (Redis Cluster has only database 0)";
    throw new ConfigError("redis.url", redis.url, expected);
  }
}

function checkTlsRules(redis: RedisConfig): void {
  const { tls } = redis;
  const isTls = redis.url.startsWith("rediss://");
  // TLS settings with a plain URL would silently send everything in clear text.
  for (const [key, value] of Object.entries(tls)) {
    if (value !== "" && !isTls) {
      throw new ConfigError(`redis.tls.${key}`, value, "empty unless redis.url is rediss://");
    }
  }
  if ((tls.certFile === "") !== (tls.keyFile === "")) {
    const [key, value] =
      tls.certFile === "" ? ["redis.tls.certFile", ""] : ["redis.tls.keyFile", ""];
    throw new ConfigError(key, value, "set together with its pair (certFile and keyFile)");
  }
}

async function readSecretFile(key: string, path: string, what: string): Promise<string> {
  try {
    // Exactly one trailing newline: editors and `echo` add one.
    return (await readFile(path, "utf8")).replace(/\r?\n$/u, "");
  } catch (error) {
    throw new ConfigError(key, path, `a readable file holding ${what} (${errorCode(error)})`, {
      cause: error,
    });
  }
}

/** Readable and parseable: a wrong file (a key given as caFile) is a configuration error too. */
async function checkPemFile(
  key: string,
  path: string,
  kind: "certificate" | "private key",
): Promise<void> {
  if (path === "") return;
  let pem: Buffer;
  try {
    pem = await readFile(path);
  } catch (error) {
    const expected = `a readable PEM ${kind} file (${errorCode(error)})`;
    throw new ConfigError(key, path, expected, { cause: error });
  }
  try {
    if (kind === "certificate") new X509Certificate(pem);
    else createPrivateKey(pem);
  } catch {
    // The parser's message is not shown: it could quote the key material.
    throw new ConfigError(key, path, `a PEM ${kind} (the file does not parse as one)`);
  }
}

function errorCode(error: unknown): string {
  const code =
    typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : "unreadable";
}
