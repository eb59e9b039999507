import { createServer, connect, type Socket } from "node:net";
import { once } from "node:events";

/**
 * A TCP proxy to a local port whose replies can be held back: while closed, what the server
 * sends waits in the proxy (in order) until open() passes it on. A read "takes as long as the
 * test wants", without a pause of the whole server and without a timer.
 */
export interface GateProxy {
  readonly port: number;
  /** Replies from now on wait in the proxy. */
  close(): void;
  /** Passes on what waited, in order, and lets replies through again. */
  open(): void;
  /** Chunks of replies waiting now: a test waits for the request to have been answered. */
  readonly held: number;
  stop(): Promise<void>;
}

export async function startGateProxy(targetPort: number): Promise<GateProxy> {
  let closed = false;
  const waiting: { to: Socket; chunk: Buffer }[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => undefined);
    }
    client.on("data", (chunk: Buffer) => upstream.write(chunk));
    upstream.on("data", (chunk: Buffer) => {
      if (closed) waiting.push({ to: client, chunk });
      else client.write(chunk);
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy has no port");
  return {
    port: address.port,
    close: () => {
      closed = true;
    },
    open: () => {
      closed = false;
      for (const { to, chunk } of waiting.splice(0)) if (!to.destroyed) to.write(chunk);
    },
    get held() {
      return waiting.length;
    },
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
