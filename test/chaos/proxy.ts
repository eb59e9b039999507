import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy between one janitor replica and Redis (node net): the nemesis adds latency to the
 * link, or cuts the replica off (a partition). While cut, the proxy closes the replica's
 * connections and holds new ones open without forwarding a byte, so the replica's commands time
 * out as across a dead link; at heal those are closed too and the replica reconnects.
 */
export class ChaosProxy {
  port = 0;
  private delayMs = 0;
  private cut = false;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;

  constructor(private readonly targetPort: () => number) {
    this.server = createServer((client) => this.accept(client));
  }

  async start(): Promise<number> {
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    const address = this.server.address();
    if (address === null || typeof address === "string") throw new Error("proxy has no port");
    this.port = address.port;
    return this.port;
  }

  /** Chunks from now on wait this long, each way (order kept). */
  setDelay(delayMs: number): void {
    this.delayMs = delayMs;
  }

  partition(): void {
    this.cut = true;
    this.dropAll();
  }

  heal(): void {
    if (!this.cut) return;
    this.cut = false;
    this.dropAll();
  }

  /** Closes every connection through it: clients reconnect (to a new target, if it moved). */
  dropConnections(): void {
    this.dropAll();
  }

  async close(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private dropAll(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  }

  private accept(client: Socket): void {
    this.track(client);
    if (this.cut) return; // held open, nothing forwarded: a dead link
    const upstream = connect(this.targetPort(), "127.0.0.1");
    this.track(upstream);
    this.forward(client, upstream);
    this.forward(upstream, client);
  }

  private forward(from: Socket, to: Socket): void {
    let lastDue = 0;
    from.on("data", (chunk: Buffer) => {
      if (this.cut) return;
      if (this.delayMs === 0 && lastDue <= performance.now()) {
        if (!to.destroyed) to.write(chunk);
        return;
      }
      // A slow link: chunks never overtake each other when the delay shrinks.
      const due = Math.max(performance.now() + this.delayMs, lastDue);
      lastDue = due;
      setTimeout(() => {
        if (!to.destroyed && !this.cut) to.write(chunk);
      }, due - performance.now());
    });
    from.on("close", () => to.destroy());
  }
}

/**
 * One janitor's network: a proxy to every server it talks to (on Sentinel, each Sentinel and each
 * data node), slowed down or cut together, as the janitor's host would be.
 */
export class ChaosLink {
  constructor(readonly proxies: readonly ChaosProxy[]) {}

  setDelay(delayMs: number): void {
    for (const proxy of this.proxies) proxy.setDelay(delayMs);
  }

  partition(): void {
    for (const proxy of this.proxies) proxy.partition();
  }

  heal(): void {
    for (const proxy of this.proxies) proxy.heal();
  }

  async close(): Promise<void> {
    await Promise.all(this.proxies.map((proxy) => proxy.close()));
  }
}
