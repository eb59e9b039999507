import { createRequire } from "node:module";
import type { NetConnectOpts, Socket } from "node:net";

/**
 * The CommonJS `net` module, whose createConnection ioredis calls for every connection it opens
 * (ES module imports of `node:net` keep their own binding and are not redirected).
 */
const net = createRequire(import.meta.url)("node:net") as {
  createConnection: (...args: unknown[]) => Socket;
};

/**
 * Sends this process' ioredis connections to a port of `map` to the port it maps to, as the chaos
 * harness' port map does for a janitor (what ioredis's natMap does): a client that learns the
 * nodes' own addresses from the slot map still goes through a proxy of each. Returns the undo.
 */
export function redirectPorts(map: ReadonlyMap<number, number>): () => void {
  const original = net.createConnection;
  net.createConnection = (...args: unknown[]): Socket => {
    const [first] = args;
    if (typeof first === "object" && first !== null) {
      const options = first as NetConnectOpts & { port?: number };
      const to = options.port === undefined ? undefined : map.get(options.port);
      if (to !== undefined) args[0] = { ...options, port: to };
    }
    return original(...args);
  };
  return () => {
    net.createConnection = original;
  };
}
