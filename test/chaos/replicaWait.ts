import type { Redis } from "ioredis";

/** What `WAIT 1` said of a master's replica: acknowledged or not within the wait, or it failed. */
export type ReplicaAck =
  { acked: boolean; failure?: undefined } | { acked: false; failure: string };

/**
 * WAIT 1 on a master. A WAIT that failed (connection closed, the client's timeout, a node
 * demoted meanwhile) is told apart from one that ran out: nobody knows whether the replica had
 * the writes, and the fault's note must not say it had not.
 */
export async function waitForReplica(admin: Redis, waitMs: number): Promise<ReplicaAck> {
  try {
    return { acked: Number(await admin.call("WAIT", 1, waitMs)) >= 1 };
  } catch (error) {
    return { acked: false, failure: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * A fault's remark on its WAITs, by master port: the masters not acknowledged within the wait,
 * as `late` words it, then each WAIT that failed, with its error; "" when every one acknowledged.
 */
export function waitRemark(
  acks: ReadonlyMap<number, ReplicaAck>,
  late: (ports: number[]) => string,
): string {
  const entries = [...acks];
  const unacked = entries.filter(([, ack]) => !ack.acked && ack.failure === undefined);
  const failed = entries.flatMap(([port, { failure }]) =>
    failure === undefined ? [] : [`; WAIT on ${port} failed: ${failure}`],
  );
  const lateRemark = unacked.length === 0 ? "" : `; ${late(unacked.map(([port]) => port))}`;
  return lateRemark + failed.join("");
}
