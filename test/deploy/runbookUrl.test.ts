// The runbook base URL, set once in an overlay, reaches every alert of the rendered
// PrometheusRule (deploy/kubernetes/components/runbook-url). Skipped without kubectl.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isRecord, kindAndName, kubectlMissing, kustomize, repoRoot } from "./kustomize.js";

const missing = kubectlMissing();

describe.skipIf(missing !== undefined)(
  `runbook-url component${missing === undefined ? "" : ` (skipped: ${missing})`}`,
  () => {
    let dir = "";
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it("puts the base URL set in one place in front of every runbook link", async () => {
      dir = await mkdtemp(join(tmpdir(), "sj-kustomize-"));
      // kustomize refuses absolute paths to other kustomizations: link them relatively.
      const kubernetes = relative(dir, join(repoRoot, "deploy/kubernetes"));
      await writeFile(
        join(dir, "kustomization.yaml"),
        [
          "resources:",
          "  - runbook-url.yaml",
          `  - ${kubernetes}/overlays/deployment`,
          "components:",
          `  - ${kubernetes}/components/runbook-url`,
          "",
        ].join("\n"),
      );
      await writeFile(
        join(dir, "runbook-url.yaml"),
        [
          "apiVersion: v1",
          "kind: ConfigMap",
          "metadata:",
          "  name: stream-janitor-runbook-url",
          "  annotations:",
          '    config.kubernetes.io/local-config: "true"',
          "data:",
          "  baseUrl: https://wiki.example.com/stream-janitor",
          "",
        ].join("\n"),
      );
      const list = await kustomize(dir);
      // The local-config ConfigMap never reaches the cluster.
      expect(list.map(kindAndName)).not.toContain("ConfigMap/stream-janitor-runbook-url");
      const rule = list.find((o) => o.kind === "PrometheusRule");
      const groups = (isRecord(rule?.spec) ? rule.spec.groups : []) as {
        rules: { alert: string; annotations: { runbook_url: string } }[];
      }[];
      const rules = groups.flatMap((group) => group.rules);
      expect(rules.length).toBeGreaterThan(0);
      for (const rule of rules) {
        expect(rule.annotations.runbook_url).toBe(
          `https://wiki.example.com/stream-janitor/runbook.md#${rule.alert.toLowerCase()}`,
        );
      }
    });
  },
);
