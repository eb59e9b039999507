/** One Dockerfile instruction, continuation lines joined. */
interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  /** The FROM line's image (ARGs not expanded) and its `AS` name. */
  from: string;
  name: string | undefined;
  instructions: Instruction[];
}

export interface Dockerfile {
  /** ARGs before the first FROM, with their defaults. */
  globalArgs: Map<string, string>;
  stages: Stage[];
}

/** Enough of the Dockerfile syntax for these tests: comments, continuations, stages. */
export function parseDockerfile(text: string): Dockerfile {
  const instructions: Instruction[] = [];
  let pending = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (pending === "" && (line === "" || line.startsWith("#"))) continue;
    if (line.startsWith("#")) continue; // a comment inside a continued instruction
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = `${pending}${line}`.trim();
    pending = "";
    const match = /^(\w+)\s+(.*)$/su.exec(full);
    if (match === null) throw new Error(`cannot parse Dockerfile line: ${full}`);
    instructions.push({ keyword: (match[1] ?? "").toUpperCase(), args: match[2] ?? "" });
  }
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === "FROM") {
      const [from = "", as, name] = instruction.args.split(/\s+/u);
      stages.push({
        from,
        name: as?.toUpperCase() === "AS" ? name : undefined,
        instructions: [],
      });
    } else if (stages.length === 0) {
      if (instruction.keyword === "ARG") {
        const [key = "", value = ""] = instruction.args.split("=", 2);
        globalArgs.set(key, value);
      }
    } else {
      stages[stages.length - 1]?.instructions.push(instruction);
    }
  }
  return { globalArgs, stages };
}

/** The key="value" pairs of a LABEL or ENV instruction. */
export function keyValues(args: string): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const match of args.matchAll(/([\w.-]+)=("(?:[^"\\]|\\.)*"|\S+)/gu)) {
    const value = match[2] ?? "";
    pairs.set(match[1] ?? "", value.startsWith('"') ? (JSON.parse(value) as string) : value);
  }
  return pairs;
}

/**
 * Whether a path of the build context is sent to the builder under these .dockerignore lines:
 * the last pattern that matches the path or one of its parent directories decides.
 */
export function inBuildContext(ignoreLines: readonly string[], path: string): boolean {
  let included = true;
  const patterns = ignoreLines.map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
  for (const pattern of patterns) {
    const negated = pattern.startsWith("!");
    const glob = (negated ? pattern.slice(1) : pattern).replace(/^\/|\/$/gu, "");
    const regex = new RegExp(
      `^${glob
        .split("**")
        .map((part) =>
          part
            .replace(/[.+^${}()|[\]\\]/gu, "\\$&")
            .replace(/\*/gu, "[^/]*")
            .replace(/\?/gu, "[^/]"),
        )
        .join(".*")}(?:/.*)?$`,
      "u",
    );
    if (regex.test(path)) included = negated;
  }
  return included;
}

/** The image's NODE_OPTIONS: the last one its final stage sets (the V8 heap cap among them). */
export function imageNodeOptions(dockerfileText: string): string {
  const { stages } = parseDockerfile(dockerfileText);
  const values = (stages[stages.length - 1]?.instructions ?? [])
    .filter((instruction) => instruction.keyword === "ENV")
    .map((instruction) => keyValues(instruction.args).get("NODE_OPTIONS"))
    .filter((value) => value !== undefined);
  const options = values[values.length - 1];
  if (options === undefined) throw new Error("the Dockerfile's final stage sets no NODE_OPTIONS");
  return options;
}

/** Every variable the final stage's ENV instructions set (the last value of each). */
export function imageEnvironment(dockerfileText: string): Map<string, string> {
  const { stages } = parseDockerfile(dockerfileText);
  const env = new Map<string, string>();
  for (const instruction of stages[stages.length - 1]?.instructions ?? []) {
    if (instruction.keyword !== "ENV") continue;
    for (const [key, value] of keyValues(instruction.args)) env.set(key, value);
  }
  return env;
}
