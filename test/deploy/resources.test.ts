// The manifests' memory settings against the RSS measured for them (deploy/kubernetes/README.md,
// "Resources"): a new measurement that outgrows a request or a limit fails here. Reads the
// manifest files themselves, so it runs without kubectl.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { repoRoot } from "./kustomize.js";

/** The limit leaves room above the busiest peak for GC and large entries. */
const LIMIT_OVER_PEAK = 1.5;

interface Resources {
  requests: { memory: string };
  limits: { memory: string };
}

/** A Kubernetes memory quantity in MiB; only the binary suffixes the manifests use. */
function mebibytes(quantity: string): number {
  const match = /^(\d+)(Mi|Gi)$/u.exec(quantity);
  if (match === null) throw new Error(`unexpected memory quantity ${quantity}`);
  return Number(match[1]) * (match[2] === "Gi" ? 1024 : 1);
}

/** Peak RSS in MiB per row of the README's Resources table (the highest figure of a range). */
function measuredPeaks(readme: string): { idle: number; busiest: number } {
  const section = readme.split("## Resources")[1] ?? "";
  const peaks = section
    .split("\n")
    .filter((line) => /^\| (idle|sweeping)/u.test(line))
    .map((line) => {
      const peakCell = line.split("|")[2] ?? "";
      return Math.max(...(peakCell.match(/\d+/gu) ?? []).map(Number));
    });
  if (peaks.length < 2) throw new Error("no Resources table in deploy/kubernetes/README.md");
  return { idle: peaks[0] ?? NaN, busiest: Math.max(...peaks) };
}

async function janitorResources(file: string, where: "containers" | "initContainers") {
  const manifest = parse(await readFile(join(repoRoot, file), "utf8")) as {
    spec: { template: { spec: Record<string, { name: string; resources: Resources }[]> } };
  };
  const container = manifest.spec.template.spec[where]?.find((c) => c.name === "stream-janitor");
  if (container === undefined) throw new Error(`${file}: no stream-janitor container`);
  return {
    request: mebibytes(container.resources.requests.memory),
    limit: mebibytes(container.resources.limits.memory),
  };
}

describe("memory settings of the manifests", () => {
  it("cover the measured RSS: the Deployment its busy peak, sidecars their idle one", async () => {
    const peaks = measuredPeaks(
      await readFile(join(repoRoot, "deploy/kubernetes/README.md"), "utf8"),
    );
    const deployment = await janitorResources(
      "deploy/kubernetes/base/deployment.yaml",
      "containers",
    );
    expect(deployment.request).toBeGreaterThanOrEqual(peaks.busiest);
    expect(deployment.limit).toBeGreaterThanOrEqual(peaks.busiest * LIMIT_OVER_PEAK);
    // Standby sidecars stay idle; the one that leads may sweep a backlog up to its limit.
    const sidecar = await janitorResources(
      "deploy/kubernetes/components/sidecar/native-sidecar.yaml",
      "initContainers",
    );
    expect(sidecar.request).toBeGreaterThanOrEqual(peaks.idle);
    expect(sidecar.limit).toBeGreaterThanOrEqual(peaks.busiest * LIMIT_OVER_PEAK);
  });

  it("reads quantities and the README table", () => {
    expect(mebibytes("96Mi")).toBe(96);
    expect(mebibytes("1Gi")).toBe(1024);
    expect(() => mebibytes("128M")).toThrow(/unexpected/u);
    const table = [
      "## Resources",
      "| state | peak RSS (VmHWM) | RSS after |",
      "| idle (empty PEL) | 72-74 MiB | 72 MiB |",
      "| sweeping a 1,000,000-entry PEL | 131-134 MiB | 117 MiB |",
    ].join("\n");
    expect(measuredPeaks(table)).toEqual({ idle: 74, busiest: 134 });
  });
});
