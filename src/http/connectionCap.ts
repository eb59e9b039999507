/** The most connections the HTTP port holds, whatever the limit: a few scrapers and probes. */
export const MAX_HTTP_CONNECTIONS = 1_024;

/**
 * Assumed where the limit cannot be read: 1,024 is the usual soft limit (Linux, systemd's
 * default), so the cap derived from it holds on most hosts and is generous for scrapers anyway.
 */
export const ASSUMED_OPEN_FILES_LIMIT = 1_024;

/**
 * Descriptors kept out of the HTTP server's reach: a quarter of the limit, at least 64, at most
 * half of it. They cover Node itself (about 20 at start: stdio, epoll, eventfd, signal pipes,
 * the thread pool), the Redis connections (four clients, each with one socket per node on a
 * Cluster, and during a reconnect the old socket and the new one at once: a 12-node Cluster
 * needs about 100), the files read while running (configuration reload, password and TLS
 * files), the listening socket, and the connection accepted above the cap before the oldest idle
 * one is closed. With a limit of 1,024 that is 256 for all of it and 768 for HTTP.
 */
export function reservedDescriptors(openFilesLimit: number): number {
  return Math.min(Math.floor(openFilesLimit / 2), Math.max(64, Math.ceil(openFilesLimit / 4)));
}

/**
 * The cap on open HTTP connections, below the process's own limit on open files (read at start)
 * by `reservedDescriptors`, and never above MAX_HTTP_CONNECTIONS: however many sockets a flood
 * opens, the Redis connections and the /livez probe still get a descriptor.
 */
export function connectionCap(openFilesLimit: number | undefined): number {
  const limit = openFilesLimit ?? ASSUMED_OPEN_FILES_LIMIT;
  if (!Number.isFinite(limit)) return MAX_HTTP_CONNECTIONS;
  return Math.max(1, Math.min(MAX_HTTP_CONNECTIONS, limit - reservedDescriptors(limit)));
}
