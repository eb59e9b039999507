import { GROUP_STATUSES, type GroupStatus } from "../core/groupStatus.js";

/** The overview's sortable columns, by their query-parameter names. */
const SORT_KEYS = [
  "status",
  "stream",
  "group",
  "lag",
  "lagAge",
  "pending",
  "oldest",
  "due",
  "deadLetters",
  "retryLane",
  "lastSweep",
] as const;
export type SortKey = (typeof SORT_KEYS)[number];

const DEFAULT_PER_PAGE = 100;
const MAX_PER_PAGE = 1000;

/** What the overview shows, all from the query string: works with plain links and GET forms. */
export interface OverviewQuery {
  sort: SortKey;
  descending: boolean;
  /** Substring of the stream or group name, case-insensitive; "" keeps every group. */
  text: string;
  status: GroupStatus | undefined;
  /** 1-based. */
  page: number;
  per: number;
  /** Refresh paused (`pause=1`). */
  paused: boolean;
}

function oneOf<T extends string>(values: readonly T[], value: string | null): T | undefined {
  return values.find((candidate) => candidate === value);
}

function positiveInteger(value: string | null, fallback: number, max: number): number {
  if (value === null || !/^\d{1,9}$/u.test(value)) return fallback;
  return Math.min(Math.max(Number(value), 1), max);
}

/** Anything unknown or malformed falls back to the default: a bad link still shows a page. */
export function parseOverviewQuery(params: URLSearchParams): OverviewQuery {
  return {
    sort: oneOf(SORT_KEYS, params.get("sort")) ?? "status",
    descending: params.get("dir") === "desc",
    text: (params.get("q") ?? "").slice(0, 200),
    status: oneOf(GROUP_STATUSES, params.get("status")),
    page: positiveInteger(params.get("page"), 1, 1_000_000),
    per: positiveInteger(params.get("per"), DEFAULT_PER_PAGE, MAX_PER_PAGE),
    paused: params.get("pause") === "1",
  };
}

/** The query as link parameters (defaults left out, so links stay short). */
export function overviewParams(
  query: OverviewQuery,
  change: Partial<OverviewQuery> = {},
): Record<string, string | number | undefined> {
  const q = { ...query, ...change };
  return {
    q: q.text,
    status: q.status,
    sort: q.sort === "status" ? undefined : q.sort,
    dir: q.descending ? "desc" : undefined,
    page: q.page === 1 ? undefined : q.page,
    per: q.per === DEFAULT_PER_PAGE ? undefined : q.per,
    pause: q.paused ? "1" : undefined,
  };
}
