import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Lease } from "../../src/lease/Lease.js";
import { createRedisClient } from "../../src/redis/createRedisClient.js";
import { defaultDeadLetterStream } from "../../src/core/resolveGroup.js";
import { pattern } from "../discovery/discoveryHarness.js";
import { ACL_FILE, aclFileForTest, aclUsers } from "../support/aclFile.js";
import { DaemonProcess, writeConfigFile } from "../support/daemonProcess.js";
import { expectExactlyOnce } from "../support/expectExactlyOnce.js";
import { addStuckEntries, numberedBodies, pendingEntries } from "../support/fabricatePel.js";
import { startRedis, uniquePrefix, type RedisServer } from "../support/redisServer.js";
import { captureLogger } from "../support/sweepHarness.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

const PASSWORD = "janitor-test-password";
/** Every key of this file starts with it; the ACL users get exactly these key patterns. */
const FILE_PREFIX = uniquePrefix("acl");

let dir: string;
let server: RedisServer;
let admin: Redis;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sj-acl-"));
  const aclFile = await aclFileForTest(dir, PASSWORD, [`${FILE_PREFIX}:*`, `{${FILE_PREFIX}:*`]);
  server = await startRedis(["--aclfile", aclFile]);
  admin = server.client();
});
afterAll(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

function client(username: string): Redis {
  const redis = createRedisClient({
    url: server.url,
    username,
    password: PASSWORD,
    connectionName: "acl-test",
    commandTimeoutMs: 2000,
    logger: pino({ level: "silent" }),
  });
  cleanups.push(async () => {
    redis.disconnect();
    return Promise.resolve();
  });
  return redis;
}

describe("the least-privilege ACL users of deploy/redis/stream-janitor.acl", () => {
  it("defines a daemon user and the operator users, without +@all, +@dangerous or allkeys", async () => {
    expect(await aclUsers()).toEqual([
      "stream-janitor",
      "stream-janitor-operator",
      "stream-janitor-operator-rw",
    ]);
    const dangerous = new Set(
      ((await admin.call("COMMAND", "LIST", "FILTERBY", "ACLCAT", "dangerous")) as string[]).map(
        (name) => name.toLowerCase(),
      ),
    );
    for (const line of (await readFile(ACL_FILE, "utf8")).split("\n").filter(Boolean)) {
      const tokens = line.split(" ");
      expect(tokens.filter((token) => /^\+@|^allkeys$|^~\*$|^%R?W?~\*$/u.test(token))).toEqual([]);
      const granted = tokens.filter((t) => t.startsWith("+")).map((t) => t.slice(1).split("|")[0]);
      // INFO is the one @dangerous command granted: read-only, and the ready check needs it.
      expect(granted.filter((command) => dangerous.has(command ?? ""))).toEqual(["info"]);
      const user = tokens[1] ?? "";
      for (const command of [["FLUSHALL"], ["KEYS", "*"], ["CONFIG", "GET", "*"], ["SHUTDOWN"]]) {
        expect(String(await admin.call("ACL", "DRYRUN", user, ...command))).not.toBe("OK");
      }
    }
  });

  it("runs the daemon under the daemon user: ready, leader, every action, gauges, SIGTERM releases the lease, ACL LOG empty", async () => {
    await admin.call("ACL", "LOG", "RESET");
    const prefix = `${FILE_PREFIX}:daemon`;
    const requeue = `${prefix}:requeue`;
    const reassign = `${prefix}:reassign`;
    const deadLetter = `${prefix}:dead-letter`;
    const monitor = `${prefix}:monitor`;
    const requeued = await addStuckEntries(admin, requeue, "workers", numberedBodies(30));
    const worn = await addStuckEntries(admin, requeue, "workers", numberedBodies(5), {
      deliveries: 5,
    });
    await addStuckEntries(admin, reassign, "workers", numberedBodies(10));
    await admin.xgroup("CREATECONSUMER", reassign, "workers", "alive");
    const deadLettered = await addStuckEntries(admin, deadLetter, "workers", numberedBodies(10));
    await addStuckEntries(admin, monitor, "workers", numberedBodies(7));

    const config = testConfig(server.url, prefix, [
      // With backoff: the sweep keeps the counts its copies carry (a sorted set).
      { stream: requeue, action: "requeue", backoffJitter: 0.1 },
      // A consumer counts as live when seen within minIdleMs; the stuck entries are an hour old.
      { stream: reassign, action: "reassign", minIdleMs: 600_000 },
      { stream: deadLetter, action: "dead-letter" },
      { stream: monitor, action: "monitor" },
    ]);
    const file = await writeConfigFile(config);
    cleanups.push(file.remove);
    // The user from the environment, as an operator would pass it.
    const daemon = await DaemonProcess.start(file.path, {
      STREAM_JANITOR_REDIS_USERNAME: "stream-janitor",
      STREAM_JANITOR_REDIS_PASSWORD: PASSWORD,
    });
    cleanups.push(() => daemon.kill());

    await waitFor(async () => (await fetch(`${daemon.httpUrl}/readyz`)).status === 200, {
      what: "/readyz 200 under the ACL user",
    });
    await waitFor(() => daemon.isLeader(), { what: "leadership under the ACL user" });
    await waitFor(
      async () =>
        (await admin.xpending(requeue, "workers"))[0] === 0 &&
        (await admin.xpending(deadLetter, "workers"))[0] === 0 &&
        (await pendingEntries(admin, reassign, "workers")).every((e) => e.consumer === "alive"),
      { what: "every action to be carried out" },
    ).catch(async (error: unknown) => {
      throw new Error(
        `${String(error)}; ACL LOG: ${JSON.stringify(await admin.call("ACL", "LOG"))}`,
      );
    });
    const requeueOutcome = await expectExactlyOnce(admin, {
      stream: requeue,
      group: "workers",
      deadLetterStream: defaultDeadLetterStream(requeue),
      originalIds: [...requeued, ...worn],
    });
    expect(requeueOutcome).toEqual({ stillPending: 0, requeued: 30, deadLettered: 5 });
    const deadLetterOutcome = await expectExactlyOnce(admin, {
      stream: deadLetter,
      group: "workers",
      deadLetterStream: defaultDeadLetterStream(deadLetter),
      originalIds: deadLettered,
    });
    expect(deadLetterOutcome.deadLettered).toBe(10);
    expect((await admin.xpending(monitor, "workers"))[0]).toBe(7);

    const metrics = await (await fetch(`${daemon.httpUrl}/metrics`)).text();
    expect(metrics).toContain(
      `stream_janitor_pending_entries{stream="${monitor}",group="workers"} 7`,
    );
    expect(metrics).toMatch(/stream_janitor_redis_up 1/u);
    expect(metrics).toMatch(new RegExp(`stream_janitor_lag_entries\\{stream="${monitor}"`, "u"));
    const clients = String(await admin.call("CLIENT", "LIST"));
    expect(clients).toMatch(/name=stream-janitor:sweep .*user=stream-janitor /u);
    // The group status and every page of the web console work under the same user.
    const status = await waitFor(
      async () => {
        const body = (await (await fetch(`${daemon.httpUrl}/status.json`)).json()) as {
          groups: { stream: string; status: string }[];
        };
        return body.groups.length === 4 && body.groups.every((g) => g.status !== "ERROR")
          ? body
          : undefined;
      },
      { what: "a verdict for every group under the ACL user" },
    );
    expect(status.groups.map((group) => group.stream).sort()).toEqual(
      [deadLetter, monitor, reassign, requeue].sort(),
    );
    const pages = [
      "/ui",
      "/ui/sweeper",
      `/ui/group?stream=${encodeURIComponent(deadLetter)}&group=workers`,
    ];
    for (const path of pages) {
      const response = await fetch(`${daemon.httpUrl}${path}`);
      expect(response.status).toBe(200);
      expect(await response.text()).not.toMatch(/NOPERM|no permissions/u);
    }

    daemon.signal("SIGTERM");
    expect((await daemon.exited).code).toBe(0);
    expect(await admin.exists(`${prefix}:lease`)).toBe(0);
    expect(await admin.call("ACL", "LOG")).toEqual([]);
  });

  it("discovers groups by pattern under the daemon user: SCAN and XINFO GROUPS allowed, ACL LOG empty", async () => {
    await admin.call("ACL", "LOG", "RESET");
    const prefix = `${FILE_PREFIX}:discover`;
    const tenants = [`${prefix}:tenant:1`, `${prefix}:tenant:2`, `${prefix}:tenant:3`];
    for (const stream of tenants)
      await addStuckEntries(admin, stream, "workers", numberedBodies(4));
    const config = testConfig(server.url, prefix, [], {
      discover: [pattern(`${prefix}:tenant:*`)],
    });
    const file = await writeConfigFile(config);
    cleanups.push(file.remove);
    const daemon = await DaemonProcess.start(file.path, {
      STREAM_JANITOR_REDIS_USERNAME: "stream-janitor",
      STREAM_JANITOR_REDIS_PASSWORD: PASSWORD,
    });
    cleanups.push(() => daemon.kill());

    await waitFor(
      async () => {
        const pending = await Promise.all(
          tenants.map(async (stream) => (await admin.xpending(stream, "workers"))[0]),
        );
        return pending.every((count) => count === 0);
      },
      { what: "every discovered group to be swept under the ACL user" },
    ).catch(async (error: unknown) => {
      throw new Error(
        `${String(error)}; ACL LOG: ${JSON.stringify(await admin.call("ACL", "LOG"))}`,
      );
    });
    const metrics = await (await fetch(`${daemon.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/^stream_janitor_discovered_groups 3$/mu);
    for (const stream of tenants) {
      expect(metrics).toContain(
        `stream_janitor_group_readable{stream="${stream}",group="workers"} 1`,
      );
    }
    expect(metrics).toMatch(/^stream_janitor_discovery_scan_failures_total 0$/mu);
    daemon.signal("SIGTERM");
    expect((await daemon.exited).code).toBe(0);
    expect(await admin.call("ACL", "LOG")).toEqual([]);
  });

  it("lets the operator user read but not write", async () => {
    const stream = `${FILE_PREFIX}:operator`;
    await addStuckEntries(admin, stream, "workers", numberedBodies(3));
    const operator = client("stream-janitor-operator");
    expect(await operator.ping()).toBe("PONG");
    expect(await operator.xlen(stream)).toBe(3);
    expect((await operator.xpending(stream, "workers"))[0]).toBe(3);
    expect(await operator.call("XINFO", "GROUPS", stream)).toHaveLength(1);
    await expect(operator.xadd(stream, "*", "a", "b")).rejects.toThrow(/NOPERM/u);
    await expect(operator.call("EVAL", "return 1", 0)).rejects.toThrow(/NOPERM/u);
    await admin.call("ACL", "LOG", "RESET");
  });

  it("grants the daemon XADD on the events stream and the operators XREAD/XRANGE on it, read-only", async () => {
    const text = await readFile(ACL_FILE, "utf8");
    const [daemonLine, operatorLine, operatorRwLine] = text.split("\n");
    expect(daemonLine?.split(" ")).toContain("~stream-janitor:events");
    expect(operatorLine?.split(" ")).toContain("%R~stream-janitor:events");
    expect(operatorRwLine?.split(" ")).toContain("%R~stream-janitor:events");
    const events = `${FILE_PREFIX}:events`;
    const daemon = client("stream-janitor");
    await daemon.call("XADD", events, "MAXLEN", "~", "100", "*", "type", "ghosts");
    for (const user of ["stream-janitor-operator", "stream-janitor-operator-rw"]) {
      const operator = client(user);
      expect(await operator.xrange(events, "-", "+")).toHaveLength(1);
      const read = await operator.call("XREAD", "COUNT", "10", "STREAMS", events, "0");
      expect(read).toHaveLength(1);
      const blocked = await operator.call("XREAD", "BLOCK", "1", "STREAMS", events, "$");
      expect(blocked).toBeNull();
    }
    await admin.call("ACL", "LOG", "RESET");
  });

  it("names the command and the rule to add on NOPERM", async () => {
    await admin.call(
      "ACL",
      "SETUSER",
      "no-ping",
      "on",
      `>${PASSWORD}`,
      "-@all",
      "+eval",
      `~${FILE_PREFIX}:*`,
    );
    const limited = client("no-ping");
    await expect(limited.ping()).rejects.toThrow(
      /NOPERM .*'ping'.* -- ACL: the ACL user may not run PING: add "\+ping" to its rules \(see deploy\/redis\/stream-janitor\.acl\)/u,
    );
    await expect(
      limited.call("EVAL", "return redis.call('XLEN', KEYS[1])", 1, `${FILE_PREFIX}:x`),
    ).rejects.toThrow(/inside the script.*ACL LOG/u);
    await expect(limited.call("EVAL", "return 1", 1, "elsewhere")).rejects.toThrow(
      /may not touch this key: add a key pattern/u,
    );
    await admin.call("ACL", "LOG", "RESET");
    await admin.call("ACL", "DELUSER", "no-ping");
  });

  it("lets a standby under the daemon user find a lease key without TTL (PTTL) and say so", async () => {
    const key = `${FILE_PREFIX}:no-ttl:lease`;
    await admin.set(key, "left-by-hand");
    const { logger, lines } = captureLogger();
    const lease = new Lease({
      redis: client("stream-janitor"),
      key,
      ttlMs: 1500,
      renewDeadlineMs: 1000,
      retryPeriodMs: 100,
      logger,
    });
    cleanups.push(() => lease.stop());
    lease.start();
    const error = await waitFor(() => lines.find((line) => line.level === 50), {
      what: "the error about the lease key",
    });
    expect(error).toMatchObject({ value: "left-by-hand", pttlMs: -1 });
    const denied = (await admin.call("ACL", "LOG")) as unknown[];
    expect(JSON.stringify(denied)).not.toContain("no-ttl");
  });
});
