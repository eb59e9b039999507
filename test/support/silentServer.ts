import { createServer, type Socket } from "node:net";

/**
 * A TCP server that accepts connections and never answers: a client waiting on its reply shows
 * how it bounds the wait (timeout, SIGINT). close() drops the held connections too.
 */
export interface SilentServer {
  port: number;
  /** Connections accepted so far (a client waiting on its reply has one). */
  connections: () => number;
  close: () => Promise<void>;
}

export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => void sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    connections: () => sockets.size,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
