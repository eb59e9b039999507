/**
 * Redis glob patterns (the `stringmatchlen` of `KEYS`, `SCAN MATCH`, `PSUBSCRIBE`), in Node, so
 * that group names (which Redis cannot filter) follow the same rules as stream names (which SCAN
 * filters server-side). Matching is on UTF-8 bytes, as in Redis: `?` is one byte.
 *
 * - `*` any run of bytes, `?` one byte;
 * - `[abc]` one of, `[^abc]` none of, `[a-z]` a range (reversed ends are swapped), `\` escapes
 *   inside a class; an unterminated class ends with the pattern;
 * - `\x` the byte x itself; a trailing lone `\` is a literal backslash.
 */
type Token =
  | { kind: "star" }
  | { kind: "any" }
  | { kind: "byte"; byte: number }
  | { kind: "class"; negate: boolean; test: (byte: number) => boolean };

const BACKSLASH = 0x5c;
const CARET = 0x5e;
const CLOSE = 0x5d;
const DASH = 0x2d;

function parseClass(pattern: Buffer, start: number): { token: Token; next: number } {
  let i = start;
  const negate = pattern[i] === CARET;
  if (negate) i += 1;
  const singles = new Set<number>();
  const ranges: [number, number][] = [];
  while (i < pattern.length && pattern[i] !== CLOSE) {
    const current = pattern[i] as number;
    if (current === BACKSLASH && i + 1 < pattern.length) {
      singles.add(pattern[i + 1] as number);
      i += 2;
    } else if (i + 2 < pattern.length && pattern[i + 1] === DASH) {
      const end = pattern[i + 2] as number;
      ranges.push(current <= end ? [current, end] : [end, current]);
      i += 3;
    } else {
      singles.add(current);
      i += 1;
    }
  }
  const test = (byte: number): boolean =>
    singles.has(byte) || ranges.some(([low, high]) => byte >= low && byte <= high);
  // Past the closing `]`, or at the end of an unterminated class.
  return { token: { kind: "class", negate, test }, next: Math.min(i + 1, pattern.length) };
}

function tokenize(pattern: Buffer): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < pattern.length) {
    const byte = pattern[i] as number;
    if (byte === 0x2a) {
      // Consecutive stars mean one star.
      if (tokens.at(-1)?.kind !== "star") tokens.push({ kind: "star" });
      i += 1;
    } else if (byte === 0x3f) {
      tokens.push({ kind: "any" });
      i += 1;
    } else if (byte === 0x5b) {
      const { token, next } = parseClass(pattern, i + 1);
      tokens.push(token);
      i = next;
    } else if (byte === BACKSLASH && i + 1 < pattern.length) {
      tokens.push({ kind: "byte", byte: pattern[i + 1] as number });
      i += 2;
    } else {
      tokens.push({ kind: "byte", byte });
      i += 1;
    }
  }
  return tokens;
}

function matchesOne(token: Token, byte: number): boolean {
  switch (token.kind) {
    case "any":
      return true;
    case "byte":
      return token.byte === byte;
    case "class":
      return token.test(byte) !== token.negate;
    case "star":
      return false;
  }
}

/**
 * Compiles a pattern once into a predicate. Linear-time matching with one backtrack point (the
 * last star), so a hostile pattern cannot make a scan quadratic per name beyond its length.
 */
export function compileGlob(pattern: string): (name: string) => boolean {
  const tokens = tokenize(Buffer.from(pattern, "utf8"));
  if (tokens.length === 1 && tokens[0]?.kind === "star") return () => true;
  return (name) => {
    const subject = Buffer.from(name, "utf8");
    let t = 0;
    let s = 0;
    let starToken = -1;
    let starSubject = 0;
    while (s < subject.length) {
      const token = tokens[t];
      if (token?.kind === "star") {
        starToken = t;
        starSubject = s;
        t += 1;
      } else if (token !== undefined && matchesOne(token, subject[s] as number)) {
        t += 1;
        s += 1;
      } else if (starToken >= 0) {
        // Let the last star swallow one more byte and retry from the token after it.
        t = starToken + 1;
        starSubject += 1;
        s = starSubject;
      } else {
        return false;
      }
    }
    while (tokens[t]?.kind === "star") t += 1;
    return t === tokens.length;
  };
}

/** One-off match; prefer compileGlob for a pattern used on many names. */
export function globMatch(pattern: string, name: string): boolean {
  return compileGlob(pattern)(name);
}
