import type { Cluster, Redis } from "ioredis";

export type MetadataLayout = "metadata-first" | "metadata-last";

export interface FabricatedDeadLetter {
  /** Its id in the dead-letter stream. */
  id: string;
  /** x-original-id. */
  originalId: string;
  /** The original fields, bytes, in order. */
  fields: Buffer[];
}

export interface DeadLetterSpec {
  stream: string;
  group: string;
  deadLetterStream: string;
  count: number;
  reason?: "max-deliveries" | "action";
  layout?: MetadataLayout;
  /** x-redrive-count already carried (a dead letter that was redriven before). */
  redriveCount?: number;
  /** Explicit dead-letter ids' milliseconds (ids `<ms>-<i>`), to fabricate old dead letters. */
  atMs?: number;
  /** First original id number, so several batches get distinct original ids. */
  firstOriginal?: number;
}

/**
 * Original fields with bytes that are not valid UTF-8, an empty value, and a field whose name
 * sorts before the metadata: what a byte-exact copy must keep, in order.
 */
export function originalFields(n: number): Buffer[] {
  return [
    Buffer.from("order"),
    Buffer.from(`#${n}`),
    Buffer.from("payload"),
    Buffer.from([0xff, 0x00, 0xfe, n % 256, 0x80]),
    Buffer.from("empty"),
    Buffer.alloc(0),
    Buffer.from("a-first"),
    Buffer.from("value with spaces\r\n"),
  ];
}

/** Dead letters in the layout the janitor writes (metadata first today, last after issue 14). */
export async function addDeadLetters(
  redis: Redis | Cluster,
  spec: DeadLetterSpec,
): Promise<FabricatedDeadLetter[]> {
  const added: FabricatedDeadLetter[] = [];
  const pipeline = redis.pipeline();
  const first = spec.firstOriginal ?? 1;
  for (let i = 0; i < spec.count; i += 1) {
    const originalId = `1000-${first + i}`;
    const metadata: (string | Buffer)[] = [
      "x-original-id",
      originalId,
      "x-original-stream",
      spec.stream,
      "x-original-group",
      spec.group,
      "x-delivery-count",
      "5",
      "x-dead-letter-reason",
      spec.reason ?? "max-deliveries",
      "x-dead-lettered-at",
      String(spec.atMs ?? Date.now()),
      "x-last-consumer",
      "crashed-consumer",
      ...(spec.redriveCount === undefined ? [] : ["x-redrive-count", String(spec.redriveCount)]),
    ];
    const fields = originalFields(first + i);
    const body =
      spec.layout === "metadata-last" ? [...fields, ...metadata] : [...metadata, ...fields];
    const id = spec.atMs === undefined ? "*" : `${spec.atMs}-${first + i}`;
    pipeline.xadd(spec.deadLetterStream, id, ...body);
    added.push({ id: "", originalId, fields });
  }
  const replies = (await pipeline.exec()) ?? [];
  replies.forEach(([error, id], index) => {
    if (error) throw error;
    const letter = added[index];
    if (letter !== undefined) letter.id = String(id);
  });
  return added;
}

/** Every entry of a stream with its fields as bytes. */
export async function rawEntries(
  redis: Redis | Cluster,
  stream: string,
): Promise<[string, Buffer[]][]> {
  const entries = (await redis.xrangeBuffer(stream, "-", "+")) as [Buffer, Buffer[]][];
  return entries.map(([id, fields]) => [id.toString(), fields]);
}

/** Field value by name from a flat byte list. */
export function fieldValue(fields: readonly Buffer[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i]?.toString() === name) return fields[i + 1]?.toString();
  }
  return undefined;
}

/**
 * Consumer groups reading the dead-letter stream itself, in the states that must hold a purge or
 * a redrive back: `auditors` was delivered the first 6 dead letters and acknowledged the first 2
 * (3..6 pending, 7.. not yet delivered); `archivers` was delivered everything and acknowledged all
 * but the 5th. Only the first two dead letters may go.
 */
export async function addDeadLetterReaders(
  redis: Redis | Cluster,
  deadLetterStream: string,
  letters: readonly FabricatedDeadLetter[],
): Promise<void> {
  const ids = letters.map((letter) => letter.id);
  await redis.xgroup("CREATE", deadLetterStream, "auditors", "0");
  await redis.call(
    "XREADGROUP",
    "GROUP",
    "auditors",
    "a1",
    "COUNT",
    6,
    "STREAMS",
    deadLetterStream,
    ">",
  );
  await redis.xack(deadLetterStream, "auditors", ...ids.slice(0, 2));
  await redis.xgroup("CREATE", deadLetterStream, "archivers", "0");
  await redis.call("XREADGROUP", "GROUP", "archivers", "b1", "STREAMS", deadLetterStream, ">");
  await redis.xack(deadLetterStream, "archivers", ...ids.filter((_, i) => i !== 4));
}

/** What XAUTOCLAIM reports as deleted in a group of the dead-letter stream: must stay empty. */
export async function readerGhosts(
  redis: Redis | Cluster,
  deadLetterStream: string,
  group: string,
): Promise<unknown> {
  const reply = (await redis.call(
    "XAUTOCLAIM",
    deadLetterStream,
    group,
    "probe",
    0,
    "0-0",
    "COUNT",
    1000,
    "JUSTID",
  )) as unknown[];
  return reply[2];
}

/**
 * The usual setup of a dead-letter test: the source stream with its group `workers`, and `count`
 * dead letters of that group in `deadLetterStream`.
 */
export async function addWorkersDeadLetters(
  redis: Redis | Cluster,
  stream: string,
  deadLetterStream: string,
  count: number,
): Promise<FabricatedDeadLetter[]> {
  await redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
  return addDeadLetters(redis, { stream, group: "workers", deadLetterStream, count });
}

/** One dead letter of another group ("audit") in the same dead-letter stream. */
export async function addAuditDeadLetter(
  redis: Redis | Cluster,
  stream: string,
  deadLetterStream: string,
): Promise<FabricatedDeadLetter | undefined> {
  const [letter] = await addDeadLetters(redis, {
    stream,
    group: "audit",
    deadLetterStream,
    count: 1,
    firstOriginal: 10,
  });
  return letter;
}
