import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keySlot } from "../../src/core/keySlot.js";
import { useRedisCluster, type ClusterNode } from "../support/redisCluster.js";
import { uniquePrefix } from "../support/redisServer.js";
import { pythonAvailable } from "./consumerProgram.js";
import { CHAOS_GROUPS, type ChaosGroup } from "./groups.js";
import { jsPrelude } from "./jsPrelude.js";
import { LOCAL_LOG_ENV, LocalHistory, parseLocalLog, WAIT_MS_ENV } from "./localHistory.js";
import { pyPrelude } from "./pyPrelude.js";
import { PROJECT_ROOT } from "./root.js";

/**
 * On Cluster, each write the chaos harness's parties log is confirmed by WAIT 1 on the connection
 * of the master that took it (README, "What the checker holds the janitor to across a
 * failover"): WAIT answers only for its own connection's writes, so one sent to another node
 * confirms nothing. Counted by each node's `cmdstat_wait` calls.
 */
const fixture = useRedisCluster({ replicas: true });
const WAIT_MS = 200;
/** Debian's python3-redis (4.3.4 here): .ci/run installs it. */
const python = await pythonAvailable();
let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sj-chaos-confirm-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function waitCalls(node: ClusterNode): Promise<number> {
  const text = String(await node.client().call("INFO", "commandstats"));
  return Number(/cmdstat_wait:calls=(\d+)/u.exec(text)?.[1] ?? 0);
}

/** WAITs each node ran while `step` ran, by port. */
async function waitsDuring(step: () => Promise<void>): Promise<Map<number, number>> {
  const nodes = fixture.cluster.nodes;
  const before = await Promise.all(nodes.map(waitCalls));
  await step();
  const after = await Promise.all(nodes.map(waitCalls));
  return new Map(nodes.map((node, i) => [node.port, (after[i] ?? 0) - (before[i] ?? 0)]));
}

function run(command: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const options = { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, timeout: 60_000 };
    execFile(command, args, options, (error, stdout, stderr) => {
      if (error === null) resolve(stdout);
      else reject(new Error(`${error.message}\n${stderr}`));
    });
  });
}

/** A consumer's prelude and one acknowledgement of one entry, on Cluster; its local log's acks. */
async function consumerAcks(language: "js" | "python") {
  const base = CHAOS_GROUPS.find((g) => g.group === "workers") as ChaosGroup;
  const group: ChaosGroup = { ...base, stream: uniquePrefix(`confirm-${language}`) };
  const log = join(dir, `${language}.log`);
  const seeds = fixture.cluster.nodes.map((node) => ({ host: "127.0.0.1", port: node.port }));
  const env = {
    CHAOS_CLUSTER_NODES: JSON.stringify(seeds),
    CONSUMER: "c1",
    [LOCAL_LOG_ENV]: log,
    [WAIT_MS_ENV]: String(WAIT_MS),
  };
  const [s, g] = [JSON.stringify(group.stream), JSON.stringify(group.group)];
  const waits = await waitsDuring(async () => {
    if (language === "js") {
      const driver = `await chaosRecorder.xgroup("CREATE", ${s}, ${g}, "$", "MKSTREAM");
await chaosRecorder.xadd(${s}, "*", "k", "x:1");
const [[, [[id]]]] = await chaosRecorder.xreadgroup("GROUP", ${g}, "c1", "COUNT", 1, "STREAMS", ${s}, ">");
console.log(await chaosRecorder.xack(${s}, ${g}, id));
chaosRecorder.disconnect();
`;
      const code = jsPrelude(group) + driver;
      expect(await run(process.execPath, ["--input-type=module", "-e", code], env)).toBe("1\n");
    } else {
      const driver = `
chaos_recorder.xgroup_create(${s}, ${g}, id="$", mkstream=True)
chaos_recorder.xadd(${s}, {"k": "x:1"})
chaos_reply = chaos_recorder.xreadgroup(${g}, "c1", {${s}: ">"}, count=1)
print(chaos_recorder.xack(${s}, ${g}, chaos_reply[0][1][0][0]))
`;
      const code = pyPrelude(group) + driver;
      expect(await run("/usr/bin/python3", ["-c", code], env)).toBe("1\n");
    }
  });
  const acks = parseLocalLog(await readFile(log, "utf8")).filter((r) => r.kind === "acks");
  const owner = await fixture.cluster.ownerOf(group.stream);
  return { acks, waits, owner };
}

/** One WAIT on the master that took the write, none anywhere else. */
function onlyOn(owner: ClusterNode, count = 1): Map<number, number> {
  return new Map(fixture.cluster.nodes.map((node) => [node.port, node === owner ? count : 0]));
}

describe("the chaos harness's confirmations on Cluster", () => {
  it("the JS consumer's acknowledgement is confirmed by WAIT on the master that took it", async () => {
    const { acks, waits, owner } = await consumerAcks("js");
    expect(acks.map((a) => a.confirmed)).toEqual([true]);
    expect(waits).toEqual(onlyOn(owner));
  });

  it.runIf(python)(
    "the Python consumer's acknowledgement is confirmed by WAIT on the master that took it",
    async () => {
      const { acks, waits, owner } = await consumerAcks("python");
      expect(acks.map((a) => a.confirmed)).toEqual([true]);
      expect(waits).toEqual(onlyOn(owner));
    },
  );

  it("the harness's write is confirmed on its master; one MOVED elsewhere meanwhile is not", async () => {
    const client = fixture.cluster.client();
    const redis = client as unknown as Redis;
    const key = uniquePrefix("confirm-moved");
    const local = new LocalHistory(WAIT_MS, dir);
    const owner = await fixture.cluster.ownerOf(key);
    let first: unknown;
    const waits = await waitsDuring(async () => {
      first = await local.write(redis, "rpush", [key, "a"]);
    });
    expect(first).toMatchObject({ reply: 1, confirmed: true });
    expect(waits).toEqual(onlyOn(owner));
    // The slot moves behind the client's back: its map still names the old master.
    const to = fixture.cluster.masters.find((node) => node !== owner) as ClusterNode;
    await fixture.cluster.migrateSlot(keySlot(key), to);
    let second: unknown;
    const moved = await waitsDuring(async () => {
      second = await local.write(redis, "rpush", [key, "b"]);
    });
    expect(second).toMatchObject({ reply: 2, confirmed: false });
    // The pipeline's WAIT ran on the old master, which took no write: it confirms nothing.
    expect(moved).toEqual(onlyOn(owner));
    expect(await client.lrange(key, 0, -1)).toEqual(["a", "b"]);
  });
});
