// The http-auth component (deploy/kubernetes/components/http-auth) on the Deployment overlay, as
// a cluster would receive it: schema-valid, restricted, the token Secret mounted where the
// component tells config.yaml to look, and the ServiceMonitor sending it. Skipped without kubectl.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schemaProblems } from "./kubernetesSchemas.js";
import {
  containersOf,
  isRecord,
  kubectlMissing,
  kustomize,
  podSpecOf,
  repoRoot,
  type KubeObject,
} from "./kustomize.js";
import { restrictedViolations } from "./podSecurity.js";

const COMPONENT = "deploy/kubernetes/components/http-auth";
const missing = kubectlMissing();

describe.skipIf(missing !== undefined)(
  `http-auth component${missing === undefined ? "" : ` (skipped: ${missing})`}`,
  () => {
    let dir = "";
    let list: KubeObject[] = [];
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "sj-kustomize-"));
      const kubernetes = relative(dir, join(repoRoot, "deploy/kubernetes"));
      await writeFile(
        join(dir, "kustomization.yaml"),
        [
          "resources:",
          `  - ${kubernetes}/overlays/deployment`,
          "components:",
          `  - ${kubernetes}/components/http-auth`,
          "",
        ].join("\n"),
      );
      list = await kustomize(dir);
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it("renders objects that validate against their schemas and stay restricted", () => {
      expect(list.flatMap(schemaProblems)).toEqual([]);
      const deployment = list.find((o) => o.kind === "Deployment");
      expect(restrictedViolations(podSpecOf(deployment as KubeObject) ?? {})).toEqual([]);
    });

    it("mounts the token Secret at the file the component tells config.yaml to name", async () => {
      const comment = await readFile(join(repoRoot, COMPONENT, "kustomization.yaml"), "utf8");
      const named = /bearerTokenFile: (\S+)/u.exec(comment)?.[1];
      const deployment = list.find((o) => o.kind === "Deployment") as KubeObject;
      const podSpec = podSpecOf(deployment) ?? {};
      const volume = (podSpec.volumes as Record<string, unknown>[]).find(
        (v) => v.name === "http-auth",
      );
      const secret = isRecord(volume?.secret) ? volume.secret : {};
      expect(secret.secretName).toBe("stream-janitor-http-auth");
      const items = secret.items as { key: string; path: string }[];
      const janitor = containersOf(podSpec).find((c) => c.name === "stream-janitor");
      const mount = janitor?.volumeMounts?.find((m) => m.name === "http-auth");
      expect(`${mount?.mountPath}/${items[0]?.path}`).toBe(named);
      expect(items[0]?.key).toBe("token");
    });

    it("has the ServiceMonitor send the same Secret's token as a Bearer credential", () => {
      const monitor = list.find((o) => o.kind === "ServiceMonitor") as KubeObject;
      const endpoints = (monitor.spec as { endpoints: Record<string, unknown>[] }).endpoints;
      for (const endpoint of endpoints) {
        expect(endpoint.authorization).toEqual({
          type: "Bearer",
          credentials: { name: "stream-janitor-http-auth", key: "token" },
        });
      }
      // The probes stay open: kubelet sends no credentials.
      const deployment = list.find((o) => o.kind === "Deployment") as KubeObject;
      const janitor = containersOf(podSpecOf(deployment) ?? {})[0];
      expect(janitor?.livenessProbe).toMatchObject({ httpGet: { path: "/livez" } });
      expect(janitor?.readinessProbe).toMatchObject({ httpGet: { path: "/readyz" } });
    });
  },
);
