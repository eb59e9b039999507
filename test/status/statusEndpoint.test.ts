import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import type { StatusReport } from "../../src/core/groupStatus.js";
import { startDaemon, type RunningDaemon } from "../../src/daemon/startDaemon.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

const fixture = useRedisServer();
const running: RunningDaemon[] = [];

afterAll(async () => {
  await Promise.all(running.map((daemon) => daemon.stop()));
});

async function statusJson(daemon: RunningDaemon): Promise<{ type: string; body: StatusReport }> {
  const response = await fetch(`${daemon.httpUrl}/status.json`);
  expect(response.status).toBe(200);
  return {
    type: response.headers.get("content-type") ?? "",
    body: (await response.json()) as StatusReport,
  };
}

describe("GET /status.json on every replica", () => {
  it("a replica that is not the leader computes the same verdicts as the leader", async () => {
    const prefix = uniquePrefix("status-replicas");
    const stream = `${prefix}:stream`;
    // Work waits and nobody consumes: STOP, on both replicas.
    await fixture.redis.xgroup("CREATE", stream, "workers", "0", "MKSTREAM");
    for (let i = 0; i < 3; i += 1) await fixture.redis.xadd(stream, "*", "n", String(i));
    const config = testConfig(fixture.server.url, prefix, [{}], {
      status: { intervalMs: 50, window: 3, stuckAfterMs: 0 },
    });
    for (let i = 0; i < 2; i += 1) {
      running.push(
        await startDaemon(config, {
          logger: pino({ level: "silent" }),
          version: "0.0.0-status",
          onFatal: () => undefined,
        }),
      );
    }
    const reports = await waitFor(
      async () => {
        const both = await Promise.all(running.map(statusJson));
        const settled = both.every(
          ({ body }) => body.groups[0]?.status === "STOP" && body.server.product !== null,
        );
        const leaders = both.filter(({ body }) => body.leader.isLeader).length;
        return settled && leaders === 1 ? both : undefined;
      },
      { what: "both replicas judging the group, one of them leading" },
    );
    for (const { type, body } of reports) {
      expect(type).toBe("application/json");
      expect(body.groups).toHaveLength(1);
      expect(body.groups[0]).toMatchObject({
        stream,
        group: "workers",
        status: "STOP",
        reason: "work waits (lag 3, 0 due pending) and the group has no consumer",
        sample: { lag: 3, pending: 0, due: 0, deadLetters: 0, retryLane: null },
      });
      expect(body.server).toMatchObject({ product: "redis", mode: "standalone" });
      expect(body.server.capabilities).toMatchObject({ groupLag: true });
      expect(body.sampling).toEqual({ intervalMs: 50, window: 3 });
    }
    const [leader, standby] = [...reports].sort(
      (a, b) => Number(b.body.leader.isLeader) - Number(a.body.leader.isLeader),
    );
    expect(leader?.body.leader.fencingToken).toEqual(expect.any(Number));
    expect(standby?.body.leader.fencingToken).toBeNull();
    expect(leader?.body.leader.instance).toMatch(/:\d+$/u);

    for (const daemon of running) {
      const metrics = await (await fetch(`${daemon.httpUrl}/metrics`)).text();
      const lines = metrics
        .split("\n")
        .filter((line) => line.startsWith(`stream_janitor_group_status{stream="${stream}"`));
      expect(lines).toHaveLength(8);
      expect(lines.filter((line) => line.endsWith(" 1"))).toEqual([
        `stream_janitor_group_status{stream="${stream}",group="workers",status="STOP"} 1`,
      ]);
    }
  });
});
