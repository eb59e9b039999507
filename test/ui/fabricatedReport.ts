import type {
  GroupStatus,
  GroupStatusReport,
  StatusReport,
  StatusSampleReport,
} from "../../src/core/groupStatus.js";

/** A group's verdict with a made-up sample: pure rendering needs no Redis. */
export function fabricatedGroup(
  stream: string,
  group: string,
  status: GroupStatus = "OK",
  sample: Partial<StatusSampleReport> = {},
): GroupStatusReport {
  return {
    stream,
    group,
    status,
    reason: status === "OK" ? "consumers keep up" : `${status.toLowerCase()} for a reason`,
    since: 1_700_000_000_000,
    sample: {
      lag: 0,
      pending: 0,
      due: 0,
      oldestPendingIdleMs: null,
      deadLetters: 0,
      retryLane: null,
      lastDeliveredId: "1700000000000-0",
      ...sample,
    },
  };
}

export function fabricatedReport(
  groups: GroupStatusReport[],
  leader: Partial<StatusReport["leader"]> = {},
): StatusReport {
  return {
    generatedAt: 1_700_000_060_000,
    leader: { isLeader: true, instance: "host-1:42", fencingToken: 7, ...leader },
    server: {
      product: "redis",
      version: "7.2.4",
      mode: "standalone",
      capabilities: { reportsDeletedIds: true, groupLag: true, consumerInactive: true },
    },
    sampling: { intervalMs: 10_000, window: 10 },
    groups,
  };
}

/** Names that break naive HTML, attributes, URLs and shells. */
export const NASTY_NAMES = [
  "<script>window.__pwned=1</script>",
  `a"b'c&d<e>`,
  "bad\uFFFDutf8",
  "lone\uD800surrogate",
  "it's a $(rm -rf) `name`",
];
