// The HTTP connection cap under a small hard limit on file descriptors (issue 21, item 13): the
// real daemon process, started through util-linux `prlimit`, flooded over loopback.
import { get } from "node:http";
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DaemonProcess, writeConfigFile } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { onPath } from "../support/requireTools.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";
import { halfOpen } from "../support/halfOpen.js";

const OPEN_FILES_LIMIT = 256;
/** Well past the limit, so that without a cap below it the process runs out of descriptors. */
const FLOOD = 600;
const PROBES = 20;

const fixture = useRedisServer();
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One GET on a connection of its own (no keep-alive pool): the status, or the error's code. */
function probe(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const request = get(url, { agent: false, timeout: 2000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("timeout", () => request.destroy(new Error("timeout")));
    request.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe("HTTP connection cap under a hard file-descriptor limit", () => {
  it(`answers every /livez probe through ${FLOOD} half-open connections under prlimit --nofile=${OPEN_FILES_LIMIT}, warns once, and can still reconnect to Redis`, async () => {
    if (!onPath("prlimit", process.env.PATH)) {
      throw new Error(
        "this test needs util-linux prlimit on PATH (Debian: apt-get install util-linux)",
      );
    }
    const prefix = uniquePrefix("open-files");
    const file = await writeConfigFile(testConfig(fixture.server.url, prefix, [{}]));
    cleanups.push(file.remove);
    const limit = `--nofile=${OPEN_FILES_LIMIT}:${OPEN_FILES_LIMIT}`;
    const daemon = await DaemonProcess.start(file.path, {}, ["prlimit", limit, "--"]);
    cleanups.push(() => daemon.kill());
    const listening = daemon.logs.find((line) => line.msg === "http server listening");
    // A quarter of the limit (at least 64) stays for Redis connections, files and Node itself.
    expect(listening).toMatchObject({ openFilesLimit: 256, maxConnections: 192 });
    await waitFor(async () => (await probe(`${daemon.httpUrl}/readyz`)) === 200, {
      what: "/readyz",
    });

    const sockets: Socket[] = [];
    cleanups.push(() => sockets.forEach((socket) => socket.destroy()));
    const { port } = new URL(daemon.httpUrl);
    for (let batch = 0; batch < FLOOD / 100; batch += 1) {
      sockets.push(...(await Promise.all(Array.from({ length: 100 }, () => halfOpen(+port)))));
    }
    const answers: (number | string)[] = [];
    for (let i = 0; i < PROBES; i += 1) answers.push(await probe(`${daemon.httpUrl}/livez`));
    expect(answers).toEqual(Array.from({ length: PROBES }, () => 200));

    const evicting = await daemon.waitForLog((line) =>
      /closing the oldest idle/u.test(line.msg ?? ""),
    );
    expect(evicting).toMatchObject({ level: 40, maxConnections: 192 });
    expect(daemon.logs.filter((line) => line.msg === evicting.msg)).toHaveLength(1);

    // The Redis connections need new descriptors while the flood holds the cap: drop them.
    await fixture.redis.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes");
    await waitFor(async () => (await probe(`${daemon.httpUrl}/readyz`)) === 200, {
      what: "/readyz after the Redis connections were dropped",
    });
    expect(daemon.logs.filter((line) => /EMFILE/u.test(JSON.stringify(line)))).toEqual([]);
  });
});
