import type { Redis } from "ioredis";
import { keySlot } from "../../src/core/keySlot.js";
import type { Violation } from "./checker.js";

/**
 * One atomic look at each stream a group reads (one call per hash slot: a source and its lane): its oldest pending id against the stream's first
 * entry id (XINFO STREAM's recorded-first-entry-id, which XTRIM moves; no body is read but the
 * first and last entries XINFO returns). An oldest pending id below the first entry, or pending
 * entries in an empty stream, means an entry was removed while still unacknowledged: nothing in a
 * chaos run deletes from a source, and a lane may only be trimmed below its oldest pending copy.
 * Returns per stream: length, pending count, the oldest pending id ('' none) and the first id.
 */
const AUDIT_LUA = `local out = {}
for i, stream in ipairs(KEYS) do
  local length, pending, oldest, first = 0, 0, '', ''
  if redis.call('EXISTS', stream) == 1 then
    local info = redis.call('XINFO', 'STREAM', stream)
    for j = 1, #info, 2 do
      if info[j] == 'length' then length = info[j + 1] end
      if info[j] == 'recorded-first-entry-id' then first = info[j + 1] end
    end
    local ok, summary = pcall(redis.call, 'XPENDING', stream, ARGV[i])
    if ok then
      pending = summary[1]
      if pending > 0 then oldest = summary[2] end
    end
  end
  out[i] = { length, pending, oldest, first }
end
return out`;

const EVERY_MS = 300;

function idBelow(a: string, b: string): boolean {
  const [am = 0, as = 0] = a.split("-").map(Number);
  const [bm = 0, bs = 0] = b.split("-").map(Number);
  return am < bm || (am === bm && as < bs);
}

/** Audits the (stream, group) pairs every 300 ms while the run goes on; keeps lane lengths. */
export class PendingAuditor {
  readonly violations: Violation[] = [];
  /** The longest each stream was seen, by stream. */
  readonly longest: Record<string, number> = {};
  audits = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly seen = new Set<string>();
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: Redis,
    private readonly pairs: readonly { stream: string; group: string }[],
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running = this.audit().catch(() => undefined); // Redis down: the next tick audits
    }, EVERY_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    await this.audit().catch(() => undefined);
  }

  async audit(): Promise<void> {
    const slots = new Map<number, { stream: string; group: string }[]>();
    for (const pair of this.pairs) {
      slots.set(keySlot(pair.stream), [...(slots.get(keySlot(pair.stream)) ?? []), pair]);
    }
    for (const pairs of slots.values()) await this.auditSlot(pairs);
    this.audits += 1;
  }

  private async auditSlot(pairs: readonly { stream: string; group: string }[]): Promise<void> {
    const keys = pairs.map((pair) => pair.stream);
    const groups = pairs.map((pair) => pair.group);
    const reply = (await this.redis.eval(AUDIT_LUA, keys.length, ...keys, ...groups)) as [
      number,
      number,
      string,
      string,
    ][];
    reply.forEach(([length, pending, oldest, first], i) => {
      const { stream, group } = pairs[i] ?? { stream: "", group: "" };
      this.longest[stream] = Math.max(this.longest[stream] ?? 0, length);
      const gone = pending > 0 && (length === 0 || idBelow(oldest, first));
      if (!gone || this.seen.has(`${stream} ${oldest}`)) return;
      this.seen.add(`${stream} ${oldest}`);
      this.violations.push({
        invariant: "pending-entry-removed",
        detail: `${stream}/${group}: pending ${oldest} is below the stream's first entry ${first || "(empty stream)"} (${pending} pending, length ${length}): removed while unacknowledged`,
      });
    });
  }
}
