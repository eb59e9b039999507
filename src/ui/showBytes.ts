import { isUtf8 } from "node:buffer";

/** Bytes of one field value shown when http.ui.showBodies is on. */
const SHOWN_BYTES = 200;

export interface ShownBytes {
  text: string;
  /** The value is not UTF-8 text: `text` is its hex. */
  hex: boolean;
  /** Bytes left out after the first SHOWN_BYTES. */
  omitted: number;
}

/**
 * A field value for the page, from its bytes: UTF-8 text when the (truncated) bytes are valid
 * UTF-8, else hex. Checked with isUtf8, not by decoding and re-encoding. A cut inside a multi-byte
 * character backs off to the character's start, so text never ends in a replacement character.
 */
export function showBytes(value: Buffer, max = SHOWN_BYTES): ShownBytes {
  let end = Math.min(value.length, max);
  if (end < value.length) {
    // Continuation bytes are 10xxxxxx: step back to the start of the character that was cut.
    let start = end;
    while (start > 0 && start > end - 4 && ((value[start] ?? 0) & 0xc0) === 0x80) start -= 1;
    if (isUtf8(value.subarray(0, start))) end = start;
  }
  const shown = value.subarray(0, end);
  const omitted = value.length - end;
  if (isUtf8(shown)) return { text: shown.toString("utf8"), hex: false, omitted };
  const hexShown = value.subarray(0, Math.min(value.length, max));
  return { text: hexShown.toString("hex"), hex: true, omitted: value.length - hexShown.length };
}
