import type { Redis } from "ioredis";
import type { ConnectionLogger } from "../logging/silentLogger.js";

/**
 * Connects a client again when ioredis ends it without the product having closed it.
 *
 * Why: with Sentinel's `failoverDetector` (ioredis 5 and 6), a `+switch-master` that arrives
 * while the client is reconnecting (its primary was just killed) calls the connector's
 * disconnect() in the middle of connect(): connect() throws "Connection is closed" and ioredis
 * sets the client to "end", for good. The daemon then never reaches the new primary: no sweep,
 * no metrics, no lease, until it is restarted. Found by test/redis/sentinel.test.ts under load
 * (the race needs the message to land during the connect phase).
 *
 * Only closes the product asked for (disconnect(), quit()) end a client; any other end is
 * logged and followed by connect() after `delayMs`, again on every later abandonment.
 */
export function reconnectWhenAbandoned(
  client: Redis,
  {
    connectionName,
    logger,
    delayMs,
  }: { connectionName: string; logger: ConnectionLogger; delayMs: number },
): void {
  let closedByProduct = false;
  let revival: NodeJS.Timeout | undefined;
  const disconnect = client.disconnect.bind(client);
  client.disconnect = (reconnect?: boolean) => {
    if (reconnect !== true) {
      closedByProduct = true;
      clearTimeout(revival);
    }
    disconnect(reconnect);
  };
  const quit = client.quit.bind(client);
  client.quit = (...args: Parameters<Redis["quit"]>) => {
    closedByProduct = true;
    clearTimeout(revival);
    return quit(...args);
  };

  client.on("end", () => {
    if (closedByProduct) return;
    logger.warn(
      { connection: connectionName, delayMs },
      "redis client gave up on its connection; connecting again",
    );
    revival = setTimeout(() => {
      revival = undefined;
      if (closedByProduct || client.status !== "end") return;
      // A failure ends the client again, which schedules the next attempt: no loop here.
      client.connect().catch(() => undefined);
    }, delayMs);
    revival.unref();
  });
}
