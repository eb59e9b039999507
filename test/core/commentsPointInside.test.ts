import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Every source file under src/ (TypeScript and Lua), relative to the repository. */
function sourceFiles(dir = "src"): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|lua)$/u.test(entry.name) ? [path] : [];
  });
}

const headings = new Set(
  [...readFileSync(join(ROOT, "README.md"), "utf8").matchAll(/^#{2,4} (.+)$/gmu)].map(
    (match) => match[1] ?? "",
  ),
);

describe("comments point inside the repository", () => {
  const files = sourceFiles().map((path) => ({
    path,
    text: readFileSync(join(ROOT, path), "utf8"),
  }));

  it("no comment cites a document the repository does not hold", () => {
    const citing = files.filter(({ text }) => /\bcontract\b/iu.test(text)).map(({ path }) => path);
    expect(citing).toEqual([]);
  });

  it('every README "Heading" a comment cites is a heading of the README', () => {
    const cited = files.flatMap(({ path, text }) =>
      [...text.matchAll(/README "([^"]+)"/gu)].map((match) => ({ path, heading: match[1] ?? "" })),
    );
    expect(cited.length).toBeGreaterThan(0);
    expect(cited.filter(({ heading }) => !headings.has(heading))).toEqual([]);
  });
});
