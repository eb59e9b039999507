import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { GroupStatusReport, StatusReport } from "../../src/core/groupStatus.js";

/** A /status.json body: a leader on Redis 7.2.4 with the given groups, sampled at 1_000_000. */
export function statusReport(groups: Partial<GroupStatusReport>[]): StatusReport {
  return {
    generatedAt: 1_000_000,
    leader: { isLeader: true, instance: "janitor-1:4242", fencingToken: 7 },
    server: {
      product: "redis",
      version: "7.2.4",
      mode: "standalone",
      capabilities: { groupLag: true },
    },
    sampling: { intervalMs: 10_000, window: 10 },
    groups: groups.map((group) => ({
      stream: "orders",
      group: "billing",
      status: "OK",
      reason: "lag 0, consumers read",
      since: 900_000,
      sample: {
        lag: 0,
        pending: 3,
        due: 0,
        oldestPendingIdleMs: 1200,
        deadLetters: 0,
        retryLane: null,
        lastDeliveredId: "999-0",
      },
      ...group,
    })),
  };
}

export interface FakeJanitor {
  url: string;
  port: number;
  /** The Authorization header of each request, in order ("" when absent). */
  authorizations: string[];
  close: () => Promise<void>;
}

/**
 * A stand-in for a janitor's HTTP endpoint (until the status engine serves /status.json for
 * real): answers GET /status.json with `answer`'s status and body.
 */
export async function startFakeJanitor(
  answer: (request: IncomingMessage) => { status: number; body: string },
): Promise<FakeJanitor> {
  const authorizations: string[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    authorizations.push(request.headers.authorization ?? "");
    if (request.url !== "/status.json") {
      response.writeHead(404).end("not found");
      return;
    }
    const { status, body } = answer(request);
    response.writeHead(status, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    authorizations,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
