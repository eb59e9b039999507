import { once } from "node:events";
import { connect, type Socket } from "node:net";

/** Opens a connection that sends half a request line and never more (a slow-loris client). */
export async function halfOpen(port: number): Promise<Socket> {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => undefined);
  // Flowing, so that the server's close is seen (a paused socket never emits "end").
  socket.resume();
  await once(socket, "connect");
  socket.write("GET /livez HTTP/1.1\r\nHost: x\r\n");
  return socket;
}
