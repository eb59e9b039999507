import { readFile } from "node:fs/promises";
import type { SavedDeadLetter } from "../scripts/restoreDeadLetters.js";

/** A saved dead letter with the stream and group it was dead-lettered from. */
export interface SavedLetter extends SavedDeadLetter {
  line: number;
  stream: string | undefined;
  group: string | undefined;
}

/** A file `dlq redrive --from-file` cannot use: nothing was written. */
export class DeadLetterFileError extends Error {
  override name = "DeadLetterFileError";
}

const ID = /^\d+-\d+$/u;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/u;

/** One `{"utf8": s}` or `{"base64": s}` value as the bytes it stands for, else undefined. */
function bytesOf(value: unknown): Buffer | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length !== 1) return undefined;
  const { utf8, base64 } = value as { utf8?: unknown; base64?: unknown };
  if (typeof utf8 === "string") return Buffer.from(utf8, "utf8");
  if (typeof base64 === "string" && BASE64.test(base64)) return Buffer.from(base64, "base64");
  return undefined;
}

/** The line's dead letter, or what is wrong with it. */
function parseLine(text: string): SavedDeadLetter | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return "not JSON";
  }
  const { id, fields } = (parsed ?? {}) as { id?: unknown; fields?: unknown };
  if (typeof id !== "string" || !ID.test(id)) return 'no "id" such as 1700000000000-0';
  if (!Array.isArray(fields)) return 'no "fields" list';
  const values: Buffer[] = [];
  for (const pair of fields) {
    const bytes = Array.isArray(pair) && pair.length === 2 ? pair.map(bytesOf) : [];
    const [name, value] = bytes;
    if (name === undefined || value === undefined) {
      return 'a field that is not a [name, value] pair of {"utf8": ...} or {"base64": ...}';
    }
    values.push(name, value);
  }
  return { id, values };
}

function metadata(values: readonly Buffer[], name: string): string | undefined {
  for (let i = 0; i + 1 < values.length; i += 2) {
    if (values[i]?.toString("latin1") === name) return values[i + 1]?.toString("utf8");
  }
  return undefined;
}

/**
 * Every dead letter of a `dlq purge --save` file, read and checked whole before anything is
 * written: a line that does not parse is an error naming its number. Blank lines are skipped.
 * The bytes stay Buffers from the file to the script: a base64 value is never made a string.
 */
export async function readDeadLetterFile(path: string): Promise<SavedLetter[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new DeadLetterFileError(`cannot read ${path}: ${(error as Error).message}`);
  }
  const letters: SavedLetter[] = [];
  for (const [index, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    const parsed = parseLine(line);
    if (typeof parsed === "string") {
      throw new DeadLetterFileError(
        `${path} line ${index + 1}: ${parsed}; nothing was redriven (is it a file dlq purge --save wrote?)`,
      );
    }
    const stream = metadata(parsed.values, "x-original-stream");
    const group = metadata(parsed.values, "x-original-group");
    letters.push({ ...parsed, line: index + 1, stream, group });
  }
  return letters;
}

/**
 * The stream and group the file's dead letters belong to: `chosen` (--stream/--group) when
 * given, else the file's own. A dead letter of another stream/group is refused, naming both.
 */
export function fileGroup(
  path: string,
  letters: readonly SavedLetter[],
  chosen: { stream: string | undefined; group: string | undefined },
): { stream: string; group: string } {
  const first = letters[0];
  const stream = chosen.stream ?? first?.stream;
  const group = chosen.group ?? first?.group;
  if (stream === undefined || group === undefined) {
    throw new DeadLetterFileError(
      first === undefined
        ? `${path} holds no dead letters: give --stream and --group, or a file dlq purge --save wrote`
        : `${path} line ${first.line}: no x-original-stream/x-original-group: give --stream and --group`,
    );
  }
  for (const letter of letters) {
    if (letter.stream !== stream || letter.group !== group) {
      throw new DeadLetterFileError(
        `${path} line ${letter.line} is a dead letter of ${letter.stream ?? "?"}/${letter.group ?? "?"}, not of ${stream}/${group}: nothing was redriven`,
      );
    }
  }
  return { stream, group };
}
