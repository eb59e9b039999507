import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";

const READY_LINE = "Ready to accept connections";
const START_TIMEOUT_MS = 10_000;

/** A port the kernel just handed out on loopback, free for the next process to take. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  server.close();
  await once(server, "close");
  return port;
}

export interface SpawnRedisOptions {
  binary?: string;
  port: number;
  /** Working directory of the server; nothing is persisted there. */
  dir: string;
  extraArgs?: readonly string[];
  /** Its own process group, so a terminal's Ctrl-C reaches only its parent. */
  detached?: boolean;
}

/**
 * Starts a throwaway redis-server on loopback with no persistence and resolves once it says it
 * is ready (its own log line: no polling, no sleeping). Used by the demo and the test harness.
 */
export async function spawnRedisServer(options: SpawnRedisOptions): Promise<ChildProcess> {
  const child = spawn(
    options.binary ?? "redis-server",
    [
      "--port",
      String(options.port),
      "--bind",
      "127.0.0.1",
      "--dir",
      options.dir,
      "--save",
      "",
      "--appendonly",
      "no",
      "--loglevel",
      "notice",
      ...(options.extraArgs ?? []),
    ],
    { stdio: ["ignore", "pipe", "pipe"], detached: options.detached ?? false },
  );
  try {
    await waitUntilReady(child);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  // Past start-up its output is of no interest; keep draining it so the pipes never fill.
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

function waitUntilReady(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => {
      finish(new Error(`redis-server did not start within ${START_TIMEOUT_MS} ms:\n${output}`));
    }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes(READY_LINE)) finish(undefined);
    };
    const onExit = (code: number | null): void => {
      finish(
        new Error(`redis-server exited (code ${String(code)}) before it was ready:\n${output}`),
      );
    };
    const finish = (error: Error | undefined): void => {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.stderr?.off("data", onData);
      child.off("exit", onExit);
      child.off("error", finish);
      if (error === undefined) resolve();
      else reject(error);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
    child.once("error", finish);
  });
}
