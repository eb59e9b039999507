import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../../", import.meta.url).pathname;
const read = (path: string): string => readFileSync(join(ROOT, path), "utf8");

/** The top-level folders of src/ and its single files at the top (cli.ts). */
const srcMembers = readdirSync(join(ROOT, "src"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() || entry.name.endsWith(".ts"))
  .map((entry) => (entry.isDirectory() ? `src/${entry.name}/` : `src/${entry.name}`));

/** A definition of name in a TypeScript source: a declaration, or a method of a class. */
function defines(source: string, name: string): boolean {
  const escaped = name.replace(/[$]/gu, "\\$&");
  return new RegExp(
    `(?:function|class|const|interface|type|let)\\s+${escaped}\\b|^\\s*(?:(?:private|public|async|static|readonly)\\s+)*${escaped}\\s*[(<=:]`,
    "mu",
  ).test(source);
}

describe("src/README.md, the maintainer's map", () => {
  const map = read("src/README.md");
  // A template (`src/scripts/<name>.ts`) names no file: left out.
  const named = [
    ...map.matchAll(/`((?:src|test|config|deploy)\/[^`#\s<]+)(?:#([A-Za-z_$][\w$]*))?`/gu),
  ];

  it("names files that exist", () => {
    expect(named.length).toBeGreaterThan(20);
    const missing = named
      .map((match) => match[1] ?? "")
      .filter((path) => !existsSync(join(ROOT, path)));
    expect(missing).toEqual([]);
  });

  it("names functions, classes and tables its files define", () => {
    const symbols = named.filter((match) => match[2] !== undefined);
    expect(symbols.length).toBeGreaterThan(10);
    const undefinedNames = symbols
      .filter((match) => !defines(read(match[1] ?? ""), match[2] ?? ""))
      .map((match) => `${match[1]}#${match[2]}`);
    expect(undefinedNames).toEqual([]);
  });

  it("cites README sections that exist", () => {
    const headings = new Set(
      [...read("README.md").matchAll(/^#{2,4} (.+)$/gmu)].map((match) => match[1] ?? ""),
    );
    const cited = [...map.matchAll(/README section "([^"]+)"/gu)].map((match) => match[1] ?? "");
    expect(cited.length).toBeGreaterThan(0);
    expect(cited.filter((heading) => !headings.has(heading))).toEqual([]);
  });
});

describe("README's layer table", () => {
  const table = read("README.md")
    .split("\n")
    .filter((line) => line.startsWith("|"));
  const rows = table
    .map((line) => /`(src\/[^`]+)`/u.exec(line)?.[1])
    .filter((x) => x !== undefined);

  it("has a row for every folder of src/, and no row for a folder that is gone", () => {
    expect([...rows].sort()).toEqual([...srcMembers].sort());
  });

  it("lists the folders in the order of the layers that npm run lint:arch enforces", () => {
    const config = read("config/dependency-cruiser.js");
    const members = [...config.matchAll(/members: \[([^\]]*)\]/gu)].flatMap((match) =>
      [...(match[1] ?? "").matchAll(/"([^"]+)"/gu)].map((member) =>
        (member[1] ?? "").endsWith(".ts") ? `src/${member[1]}` : `src/${member[1]}/`,
      ),
    );
    expect(rows.filter((row) => members.includes(row)).length).toBe(members.length);
    // Within a layer the order is free; across layers, a row never comes before a lower layer's.
    const layerOf = (row: string): number => {
      const layers = [...config.matchAll(/members: \[([^\]]*)\]/gu)].map((match) => match[1] ?? "");
      const name = row.replace(/^src\//u, "").replace(/\/$/u, "");
      return layers.findIndex((layer) => layer.includes(`"${name}"`));
    };
    const order = rows.map(layerOf);
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });
});
