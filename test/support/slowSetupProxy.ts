import { createServer, connect, type Socket } from "node:net";
import { once } from "node:events";

/**
 * A TCP proxy to a local port where every new connection is slow to set up: what the server
 * sends on it waits `setupMs` from the connection's start (a TLS handshake over a long link, or a
 * loaded host), then flows at once, in order. Connections already set up are fast.
 */
export interface SlowSetupProxy {
  readonly port: number;
  close(): Promise<void>;
}

export async function startSlowSetupProxy(
  targetPort: number,
  setupMs: number,
): Promise<SlowSetupProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => undefined);
    }
    let held: Buffer[] | undefined = [];
    // The set-up time of a slow link, not a synchronisation: the product must cope with it.
    const setUp = setTimeout(() => {
      for (const chunk of held ?? []) client.write(chunk);
      held = undefined;
    }, setupMs);
    client.on("data", (chunk: Buffer) => upstream.write(chunk));
    upstream.on("data", (chunk: Buffer) => {
      if (held === undefined) client.write(chunk);
      else held.push(chunk);
    });
    client.on("close", () => {
      clearTimeout(setUp);
      upstream.destroy();
    });
    upstream.on("close", () => client.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy has no port");
  return {
    port: address.port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
