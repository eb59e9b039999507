import { createServer, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { monitorCommands } from "./monitorFeed.js";
import { uniquePrefix, useRedisServer } from "./redisServer.js";
import { waitFor } from "./waitFor.js";

const fixture = useRedisServer();

const MONITOR_LINE = '+1700000000.000001 [0 127.0.0.1:6000] "XADD" "s" "*" "n" "1"';

/**
 * A server that answers MONITOR with its +OK and the first monitor line in one write, as a busy
 * Redis does when the line follows at once (a replica's replication stream, a loaded machine).
 */
async function eagerMonitorServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("data", (data) => {
      if (/monitor/iu.test(data.toString())) socket.write(`+OK\r\n${MONITOR_LINE}\r\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("monitorCommands", () => {
  it("reads the first line that comes in the same read as the +OK", async () => {
    const server = await eagerMonitorServer();
    cleanups.push(server.close);
    const feed = await monitorCommands(server.port);
    cleanups.push(() => feed.stop());
    await waitFor(() => feed.commands.length > 0, { what: "the monitor line" });
    expect(feed.commands).toEqual(["XADD"]);
  });

  it("reports a real server's commands in order, upper-case", async () => {
    const feed = await monitorCommands(fixture.server.port);
    cleanups.push(() => feed.stop());
    const key = uniquePrefix("monitored");
    await fixture.redis.set(key, 'a b " c');
    await fixture.redis.call("xadd", `${key}:s`, "*", "n", "1");
    await waitFor(() => feed.commands.includes("XADD"), { what: "the XADD line" });
    expect(feed.commands.filter((c) => c === "SET" || c === "XADD")).toEqual(["SET", "XADD"]);
  });

  it("gives each command's words, unescaped", async () => {
    const feed = await monitorCommands(fixture.server.port);
    cleanups.push(() => feed.stop());
    const key = uniquePrefix("words");
    await fixture.redis.set(key, 'a b " c \\ \u0001');
    await waitFor(() => feed.commands.includes("SET"), { what: "the SET line" });
    expect(feed.calls[feed.commands.indexOf("SET")]).toEqual(["set", key, 'a b " c \\ \u0001']);
  });
});
