/** One advisory event as read back from the events stream (README "Configuration", `events.*`). */
export interface AdvisoryEventRecord {
  id: string;
  type: string;
  at: number;
  by: string;
  stream: string;
  group: string;
  count: number;
  ids: string[];
  detail: unknown;
}

/** What `events` keeps: every given filter must match. */
export interface EventFilter {
  type?: string;
  stream?: string;
  group?: string;
}

/** An entry's fields as a record; a field the writer did not set reads empty. */
export function parseEventEntry(id: string, fields: readonly string[]): AdvisoryEventRecord {
  const value = (name: string): string => {
    for (let i = 0; i + 1 < fields.length; i += 2)
      if (fields[i] === name) return fields[i + 1] ?? "";
    return "";
  };
  const ids = value("ids");
  return {
    id,
    type: value("type"),
    at: Number(value("at")),
    by: value("by"),
    stream: value("stream"),
    group: value("group"),
    count: Number(value("count") || "0"),
    ids: ids === "" ? [] : ids.split(" "),
    detail: parseDetail(value("detail")),
  };
}

function parseDetail(text: string): unknown {
  try {
    return JSON.parse(text || "{}") as unknown;
  } catch {
    // Written by someone else: shown as it is rather than dropped.
    return text;
  }
}

export function eventMatches(event: AdvisoryEventRecord, filter: EventFilter): boolean {
  return (
    (filter.type === undefined || event.type === filter.type) &&
    (filter.stream === undefined || event.stream === filter.stream) &&
    (filter.group === undefined || event.group === filter.group)
  );
}

/** One human line: when, what, where, how many, who, the ids and the detail. */
export function formatEventLine(event: AdvisoryEventRecord): string {
  const when = Number.isFinite(event.at) ? new Date(event.at).toISOString() : "?";
  // A stream's own event (trimmed) has no group; the janitor's own (lease, reload) neither stream.
  const where =
    event.stream === ""
      ? ""
      : event.group === ""
        ? `  ${event.stream}`
        : `  ${event.stream}/${event.group}`;
  const count = event.count > 0 ? `  count ${event.count}` : "";
  const ids = event.ids.length > 0 ? `  ids ${event.ids.join(" ")}` : "";
  const detail = JSON.stringify(event.detail);
  return `${when}  ${event.type}${where}${count}  by ${event.by}${ids}${detail === "{}" ? "" : `  ${detail}`}`;
}
