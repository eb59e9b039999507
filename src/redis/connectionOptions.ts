import { readFileSync } from "node:fs";
import type { ConnectionOptions } from "node:tls";
import type { RedisOptions, SentinelAddress } from "ioredis";
import type { RedisConfig } from "../core/configTypes.js";

/** What the factory needs from the configuration; `url` and `password` at least. */
export type RedisEndpointSettings = Pick<RedisConfig, "url" | "password"> &
  Partial<Omit<RedisConfig, "url" | "password">>;

/**
 * The ioredis options that say WHERE and HOW to connect (address, TLS, ACL user, Sentinel),
 * derived from redis.* alone. Everything about timeouts and retries stays in the factory.
 * Certificate files are read here, synchronously: loadConfig has checked them already.
 */
export function endpointOptions(settings: RedisEndpointSettings): RedisOptions {
  const url = new URL(settings.url);
  const credentials = credentialsOf(settings, url);
  if (url.protocol === "unix:") {
    return { path: decodeURIComponent(url.pathname), ...credentials, ...dbOf(url) };
  }
  const tls = url.protocol === "rediss:" ? tlsOptions(settings) : undefined;
  if (settings.mode === "sentinel") {
    return {
      sentinels: (settings.nodes ?? []).map(parseHostPort),
      name: settings.masterName ?? "",
      role: "master",
      ...credentials,
      ...dbOf(url),
      ...(settings.sentinelPassword ? { sentinelPassword: settings.sentinelPassword } : {}),
      // One switch for the whole topology: rediss:// means TLS to the Sentinels and the data
      // nodes alike, with the same CA, client certificate and name to verify.
      ...(tls === undefined ? {} : { tls, sentinelTLS: tls, enableTLSForSentinelMode: true }),
      // Subscribe to +switch-master on the Sentinels and reconnect at once on a failover,
      // instead of waiting for the old primary to drop the connection.
      failoverDetector: true,
    };
  }
  return {
    host: url.hostname.replace(/^\[|\]$/gu, ""),
    port: url.port === "" ? 6379 : Number(url.port),
    ...credentials,
    ...dbOf(url),
    ...(tls === undefined ? {} : { tls }),
  };
}

/** redis.username, else the URL's user; redis.password, else the URL's password. */
export function credentialsOf(
  settings: RedisEndpointSettings,
  url: URL,
): Pick<RedisOptions, "username" | "password"> {
  const username = settings.username || decodeURIComponent(url.username);
  const password = settings.password || decodeURIComponent(url.password);
  return {
    ...(username === "" ? {} : { username }),
    ...(password === "" ? {} : { password }),
  };
}

function dbOf(url: URL): Pick<RedisOptions, "db"> {
  // unix:///path has no db in its path; redis://host/2 does. `?db=2` works for both.
  const fromPath = url.protocol === "unix:" ? "" : url.pathname.slice(1);
  const raw = url.searchParams.get("db") ?? fromPath;
  return /^\d+$/u.test(raw) ? { db: Number(raw) } : {};
}

export function tlsOptions(settings: RedisEndpointSettings): ConnectionOptions {
  const tls = settings.tls;
  const options: ConnectionOptions = {};
  if (tls === undefined) return options;
  if (tls.caFile !== "") options.ca = readFileSync(tls.caFile);
  if (tls.certFile !== "") options.cert = readFileSync(tls.certFile);
  if (tls.keyFile !== "") options.key = readFileSync(tls.keyFile);
  if (tls.serverName !== "") options.servername = tls.serverName;
  return options;
}

/** "host:port" or "[v6]:port", validated by the schema. */
export function parseHostPort(node: string): Partial<SentinelAddress> {
  const colon = node.lastIndexOf(":");
  return {
    host: node.slice(0, colon).replace(/^\[|\]$/gu, ""),
    port: Number(node.slice(colon + 1)),
  };
}
