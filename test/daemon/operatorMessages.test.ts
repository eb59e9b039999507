import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { Lease } from "../../src/lease/Lease.js";
import { DaemonProcess, runCli, writeConfigFile } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";
import { leaseConnection, silentLogger } from "../lease/leaseTestKit.js";

const fixture = useRedisServer();
const running: DaemonProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((daemon) => daemon.kill()));
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function configPath(config: unknown): Promise<string> {
  const file = await writeConfigFile(config);
  cleanups.push(file.remove);
  return file.path;
}

describe("messages an operator can act on", () => {
  it("sweep exits 75 naming the holder of the lease: its host and pid", async () => {
    const prefix = uniquePrefix("held");
    const config = testConfig(fixture.server.url, prefix, [{}]);
    const redis = await leaseConnection(fixture.server);
    const holder = new Lease({ redis, ...config.lease, logger: silentLogger });
    cleanups.push(async () => {
      await holder.stop();
      redis.disconnect();
    });
    const term = await holder.tryAcquireOnce();
    expect(term).toBeDefined();
    const result = await runCli(["sweep", "--config", await configPath(config)]);
    expect(result.code).toBe(75);
    expect(result.stderr).toContain(
      `is held by another process: ${hostname()} (pid ${process.pid}, fencing token ${term?.fencingToken})`,
    );
  });

  it("the start-up line names the endpoint (masked), the server and the mode; a standby says who leads", async () => {
    const prefix = uniquePrefix("startup");
    await fixture.redis.call(
      "ACL",
      "SETUSER",
      "janitor",
      "on",
      ">pw-not-shown",
      "~*",
      "&*",
      "+@all",
    );
    const url = fixture.server.url.replace("redis://", "redis://janitor:pw-not-shown@");
    const config = testConfig(url, prefix, [{}]);
    const path = await configPath(config);
    const leader = await DaemonProcess.start(path);
    running.push(leader);
    await waitFor(() => leader.isLeader(), { what: "the first daemon to lead" });
    const standby = await DaemonProcess.start(path);
    running.push(standby);

    const line = await standby.waitForLog((l) => String(l.msg).startsWith("connected to "));
    // The server as it names itself: Valkey pins redis_version at 7.2.4 and gives its own apart
    // (both wordings: test/daemon/describeServer.test.ts).
    const info = await fixture.redis.info("server");
    const valkey = /^server_name:valkey\r?$/mu.test(info);
    const product = valkey ? "Valkey" : "Redis";
    const version = new RegExp(`^${valkey ? "valkey" : "redis"}_version:(\\S+)`, "mu").exec(
      info,
    )?.[1];
    expect(line.msg).toBe(
      `connected to ${product} ${version} at redis://janitor:***@127.0.0.1:${fixture.server.port} (standalone)`,
    );
    expect(line).toMatchObject({ server: { product, version, mode: "standalone" } });
    const standing = await standby.waitForLog((l) => String(l.msg).startsWith("standing by"));
    expect(standing.level).toBe(30);
    expect(standing.msg).toBe(
      `standing by: the lease is held by ${hostname()} (pid ${leader.pid})`,
    );
    expect(JSON.stringify([...leader.logs, ...standby.logs])).not.toContain("pw-not-shown");
  });
});
