import { connect } from "node:net";

/** What a Redis server reported through MONITOR since the feed started. */
interface MonitorFeed {
  /** The name of each command, upper-case, in the order the server ran them. */
  readonly commands: string[];
  /** Each command's words as MONITOR quotes them (name first, as sent), in the same order. */
  readonly calls: string[][];
  stop(): void;
}

/** The quoted words of a MONITOR line, unescaped (`\"`, `\\`, `\xNN`; others kept as sent). */
function words(line: string): string[] {
  return [...line.matchAll(/"((?:[^"\\]|\\.)*)"/gu)].map(([, quoted = ""]) =>
    quoted.replace(/\\(x[0-9a-f]{2}|.)/gu, (_, escaped: string) =>
      escaped.length === 3 ? String.fromCharCode(parseInt(escaped.slice(1), 16)) : escaped,
    ),
  );
}

/**
 * MONITOR on a plain socket of its own. Not ioredis' monitor(): it enters monitoring mode only
 * after the +OK's promise settles, so a first line that arrives in the same read as the +OK (a
 * busy server, a replica's replication stream) is taken for a reply and fails with "Command queue
 * state error". Here every line after the +OK is a monitor line, however it is split or joined.
 */
export async function monitorCommands(port: number, host = "127.0.0.1"): Promise<MonitorFeed> {
  const socket = connect(port, host);
  const commands: string[] = [];
  const calls: string[][] = [];
  let buffered = "";
  let monitoring = false;
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.on("data", (data: Buffer) => {
      const lines = (buffered + data.toString("latin1")).split("\r\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        if (monitoring) {
          // +<time> [<db> <source>] "<command>" "<arg>" ...
          const name = /^\+\S+ \[[^\]]*\] "([^"]*)"/u.exec(line)?.[1];
          if (name !== undefined) {
            commands.push(name.toUpperCase());
            calls.push(words(line.slice(line.indexOf("] ") + 2)));
          }
        } else if (line === "+OK") {
          monitoring = true;
          resolve();
        } else {
          socket.destroy();
          reject(new Error(`MONITOR refused: ${line}`));
        }
      }
    });
    socket.write("MONITOR\r\n");
  });
  // Once stopped (or the server gone), the feed just ends.
  socket.on("error", () => undefined);
  return { commands, calls, stop: () => socket.destroy() };
}
