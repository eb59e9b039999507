import { afterEach, describe, expect, it } from "vitest";
import { DaemonProcess, writeConfigFile, type LogLine } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

const fixture = useRedisServer();
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** How many times the server refused this user's password (ACL LOG counts repeats in one entry). */
async function refusedLogins(user: string): Promise<number> {
  const entries = (await fixture.redis.call("ACL", "LOG", "128")) as unknown[][];
  let count = 0;
  for (const entry of entries) {
    const fields = new Map<string, unknown>();
    for (let i = 0; i + 1 < entry.length; i += 2) fields.set(String(entry[i]), entry[i + 1]);
    if (fields.get("reason") === "auth" && fields.get("username") === user) {
      count += Number(fields.get("count"));
    }
  }
  return count;
}

const mentionsAuth = (line: LogLine): boolean => /WRONGPASS|authentication/u.test(String(line.msg));

describe("run: an authentication failure in the log", () => {
  it("is logged once, as such and without a stack, while the daemon keeps retrying; its end once", async () => {
    const prefix = uniquePrefix("auth-log");
    const user = `${prefix}-u`;
    await fixture.redis.call("ACL", "SETUSER", user, "on", ">right", "~*", "&*", "+@all");
    cleanups.push(async () => {
      await fixture.redis.call("ACL", "DELUSER", user);
    });
    const url = fixture.server.url.replace("redis://", `redis://${user}:wrong@`);
    const file = await writeConfigFile(testConfig(url, prefix, [{}]));
    cleanups.push(file.remove);
    const daemon = await DaemonProcess.start(file.path);
    cleanups.push(() => daemon.kill());

    const line = await daemon.waitForLog((l) => mentionsAuth(l));
    expect(line.level).toBe(40);
    expect(line.msg).toBe(
      `authentication failed at 127.0.0.1:${fixture.server.port} (WRONGPASS): check the user and redis.password or redis.passwordFile; retrying`,
    );
    // Scrapes and probes during the failure: the gauges' state is no new authentication line.
    await fetch(`${daemon.httpUrl}/metrics`);
    expect((await fetch(`${daemon.httpUrl}/readyz`)).status).toBe(503);
    const before = await refusedLogins(user);
    await waitFor(async () => (await refusedLogins(user)) >= before + 5, {
      timeoutMs: 20_000,
      what: "five more refused logins: the daemon keeps retrying",
    });
    await fetch(`${daemon.httpUrl}/metrics`);

    // The password the daemon has becomes right: it connects and says so, once.
    await fixture.redis.call("ACL", "SETUSER", user, ">wrong");
    await daemon.waitForLog((l) => String(l.msg).startsWith("connected to "), 20_000);
    await waitFor(() => daemon.isLeader(), { what: "the daemon to lead" });
    const authLines = daemon.logs.filter(mentionsAuth);
    expect(authLines.map((l) => l.msg)).toEqual([line.msg]);
    expect(daemon.logs.filter((l) => JSON.stringify(l).includes('"stack"'))).toEqual([]);
    // The scrape says its own state (gauges dropped) once, with the cause, not its symptoms.
    const dropped = daemon.logs.filter((l) => String(l.msg).startsWith("gauges dropped"));
    expect(dropped.map((l) => l.problem)).toEqual([line.problem]);
  });
});
