/** A key given twice in one JSON object: its dotted path and the lines of both. */
export interface DuplicateJsonKey {
  readonly path: string;
  readonly firstLine: number;
  readonly secondLine: number;
}

type Frame =
  | { kind: "object"; path: string; lines: Map<string, number>; key: string; wantsKey: boolean }
  | { kind: "array"; path: string; index: number };

function childPath(parent: Frame | undefined): string {
  if (parent === undefined) return "";
  if (parent.kind === "array") return `${parent.path}[${parent.index}]`;
  return parent.path === "" ? parent.key : `${parent.path}.${parent.key}`;
}

/**
 * JSON.parse keeps the last of two equal keys and says nothing, where YAML refuses them. This walks
 * text that JSON.parse has already accepted (so it needs no error handling), comparing keys as
 * JSON.parse does (decoded: `"gr\u006fup"` is `"group"`), and names the first duplicate with its
 * path as configuration errors write it (`groups[1].group`). Strings cannot hold a raw newline in
 * JSON, so a newline outside them is the only one to count.
 */
export function findDuplicateJsonKey(text: string): DuplicateJsonKey | undefined {
  const stack: Frame[] = [];
  let line = 1;
  for (let at = 0; at < text.length; at += 1) {
    const char = text[at];
    const top = stack.at(-1);
    if (char === "\n") {
      line += 1;
    } else if (char === '"') {
      let end = at + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      if (top?.kind === "object" && top.wantsKey) {
        const key = JSON.parse(text.slice(at, end + 1)) as string;
        top.key = key;
        top.wantsKey = false;
        const firstLine = top.lines.get(key);
        if (firstLine !== undefined) return { path: childPath(top), firstLine, secondLine: line };
        top.lines.set(key, line);
      }
      at = end;
    } else if (char === "{") {
      stack.push({
        kind: "object",
        path: childPath(top),
        lines: new Map(),
        key: "",
        wantsKey: true,
      });
    } else if (char === "[") {
      stack.push({ kind: "array", path: childPath(top), index: 0 });
    } else if (char === "}" || char === "]") {
      stack.pop();
    } else if (char === ",") {
      if (top?.kind === "object") top.wantsKey = true;
      else if (top?.kind === "array") top.index += 1;
    }
  }
  return undefined;
}
