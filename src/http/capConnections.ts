import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Logger } from "pino";

/**
 * Evicts the oldest connection that is not serving a request when a new one exceeds the cap. The
 * first eviction is logged at warn, once: a flood is one episode, which ends (logged at info with
 * the count) when the open connections fall back to half the cap.
 */
export function capConnections(server: Server, maxConnections: number, log: Logger): void {
  const open = new Set<Socket>();
  // Insertion-ordered: the first is the connection idle (or half-open) the longest.
  const idle = new Set<Socket>();
  let evictedInEpisode = 0;
  const forget = (socket: Socket): void => {
    open.delete(socket);
    idle.delete(socket);
  };
  server.on("connection", (socket: Socket) => {
    open.add(socket);
    idle.add(socket);
    socket.once("close", () => {
      forget(socket);
      if (evictedInEpisode > 0 && open.size <= maxConnections / 2) {
        log.info(
          { maxConnections, evicted: evictedInEpisode },
          `http connections back under half the cap, after ${evictedInEpisode} were closed to make room`,
        );
        evictedInEpisode = 0;
      }
    });
    if (open.size <= maxConnections) return;
    const oldest: Socket = idle.values().next().value ?? socket;
    // Forgotten at once: destroy() closes the descriptor now, its "close" event comes later.
    forget(oldest);
    oldest.destroy();
    if (evictedInEpisode === 0) {
      log.warn(
        { maxConnections },
        `http connections reached the cap of ${maxConnections}: closing the oldest idle ones to let new ones in (a flood, or a client that leaks connections)`,
      );
    }
    evictedInEpisode += 1;
  });
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    idle.delete(request.socket);
    response.once("finish", () => {
      if (open.has(request.socket) && !request.socket.destroyed) idle.add(request.socket);
    });
  });
}
