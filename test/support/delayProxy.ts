import { createServer, connect, type Socket } from "node:net";
import { once } from "node:events";

/** A TCP proxy to a local port that delays every chunk, each way, by `delayMs` (order kept). */
export interface DelayProxy {
  readonly port: number;
  /** The link degrades (or recovers): chunks from now on wait this long. */
  setDelay(delayMs: number): void;
  close(): Promise<void>;
}

function delayed(from: Socket, to: Socket, delayMs: () => number): void {
  let lastDue = 0;
  from.on("data", (chunk: Buffer) => {
    // A slow link, not a synchronisation: the product must cope with late replies. Chunks never
    // overtake each other when the delay shrinks.
    const due = Math.max(performance.now() + delayMs(), lastDue);
    lastDue = due;
    setTimeout(() => {
      if (!to.destroyed) to.write(chunk);
    }, due - performance.now());
  });
  from.on("close", () => setTimeout(() => to.destroy(), delayMs()));
  from.on("error", () => to.destroy());
}

export async function startDelayProxy(targetPort: number, initialDelayMs = 0): Promise<DelayProxy> {
  let delayMs = initialDelayMs;
  const currentDelay = (): number => delayMs;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    }
    delayed(client, upstream, currentDelay);
    delayed(upstream, client, currentDelay);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy has no port");
  return {
    port: address.port,
    setDelay: (next) => {
      delayMs = next;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
