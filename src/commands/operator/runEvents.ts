import {
  eventMatches,
  formatEventLine,
  parseEventEntry,
  type AdvisoryEventRecord,
  type EventFilter,
} from "../../events/advisoryEventRecord.js";
import { redisNowMs } from "../../redis/redisNowMs.js";
import { EXIT } from "../exitCodes.js";
import { sinceOption } from "./sinceOption.js";
import { OperatorFailure, type OperatorSession } from "./OperatorCommand.js";
import { type OptionValues } from "../Command.js";

/** Entries read per XRANGE call. */
const PAGE = 1000;
/** How long one XREAD waits: the loop checks for a signal between waits. */
const BLOCK_MS = 1000;

type Entry = [id: string, fields: string[]];

function optionalString(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

/** `events`: what eventsCommand runs, loaded only when the command is run. */
export async function runEvents(values: OptionValues, session: OperatorSession): Promise<number> {
  const key = session.config.events.stream;
  if (key === "") throw new OperatorFailure('events are off (events.stream is "")');
  const filter: EventFilter = {
    type: optionalString(values, "type"),
    stream: optionalString(values, "stream"),
    group: optionalString(values, "group"),
  };
  const print = (event: AdvisoryEventRecord): void => {
    if (!eventMatches(event, filter)) return;
    session.stdout.write(
      values.json === true ? `${JSON.stringify(event)}\n` : `${formatEventLine(event)}\n`,
    );
  };
  const sinceMs = sinceOption(values);
  const follow = values.follow === true;
  const { redis, signal } = session;

  // History: everything (or the last --since), unless following only what comes next.
  let last = await lastId(session, key);
  if (!follow || sinceMs !== undefined) {
    last = "0-0";
    // Ids are times of the Redis clock, like `at`: the range starts there, and `at` decides.
    const cutoff = sinceMs === undefined ? 0 : (await redisNowMs(redis)) - sinceMs;
    let start = sinceMs === undefined ? "-" : String(cutoff);
    for (;;) {
      const page = (await redis.call("XRANGE", key, start, "+", "COUNT", String(PAGE))) as Entry[];
      for (const [id, fields] of page) {
        const event = parseEventEntry(id, fields);
        if (!(event.at < cutoff)) print(event);
      }
      const tail = page.at(-1);
      if (tail !== undefined) last = tail[0];
      if (page.length < PAGE || tail === undefined) break;
      start = `(${tail[0]}`;
    }
  }
  if (!follow) return EXIT.ok;

  while (!signal.aborted) {
    const reply = (await redis.call(
      "XREAD",
      "COUNT",
      String(PAGE),
      "BLOCK",
      String(BLOCK_MS),
      "STREAMS",
      key,
      last,
    )) as [string, Entry[]][] | null;
    for (const [, entries] of reply ?? []) {
      for (const [id, fields] of entries) {
        print(parseEventEntry(id, fields));
        last = id;
      }
    }
  }
  return EXIT.ok;
}

/** The newest id of the events stream ("0-0" when empty): following starts after it. */
async function lastId(session: OperatorSession, key: string): Promise<string> {
  const newest = (await session.redis.call("XREVRANGE", key, "+", "-", "COUNT", "1")) as Entry[];
  return newest[0]?.[0] ?? "0-0";
}
