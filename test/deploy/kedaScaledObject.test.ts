// The KEDA example (components/keda, rendered through overlays/sidecar-keda): no schema package
// covers keda.sh, so the ScaledObject's shape is checked here by hand (the fields KEDA requires,
// the prometheus trigger's metadata), its query against the metrics the daemon exports, and the
// other objects against their Kubernetes schemas as kubernetes.test.ts does.
import { beforeAll, describe, expect, it } from "vitest";
import { METRIC_TABLE } from "../../src/metrics/metricTable.js";
import { metricNames } from "../support/promqlMetricNames.js";
import { schemaProblems } from "./kubernetesSchemas.js";
import { isRecord, kindAndName, kubectlMissing, kustomize, type KubeObject } from "./kustomize.js";

const missing = kubectlMissing();
const QUERY =
  'max by (stream, group) (stream_janitor_backlog_entries{stream="orders",group="billing"})';
let objects: KubeObject[] = [];

function record(value: unknown, where: string): Record<string, unknown> {
  if (!isRecord(value)) throw new Error(`${where} is not an object`);
  return value;
}

function scaledObject(): Record<string, unknown> {
  const found = objects.filter((o) => o.kind === "ScaledObject");
  expect(found.map(kindAndName)).toEqual(["ScaledObject/orders-billing-consumer"]);
  const [object] = found;
  expect(object?.apiVersion).toBe("keda.sh/v1alpha1");
  return record(object?.spec, "spec");
}

describe.skipIf(missing !== undefined)(
  `kubectl kustomize deploy/kubernetes/overlays/sidecar-keda${missing === undefined ? "" : ` (skipped: ${missing})`}`,
  () => {
    beforeAll(async () => {
      objects = await kustomize("deploy/kubernetes/overlays/sidecar-keda");
    });

    it("targets a Deployment the overlay renders, within replica bounds", () => {
      const spec = scaledObject();
      const target = record(spec.scaleTargetRef, "spec.scaleTargetRef");
      expect(target).toMatchObject({ apiVersion: "apps/v1", kind: "Deployment" });
      const deployments = objects.filter((o) => o.kind === "Deployment");
      expect(deployments.map((o) => o.metadata.name)).toContain(target.name);
      const { minReplicaCount: min, maxReplicaCount: max } = spec;
      expect(Number.isInteger(min) && Number.isInteger(max)).toBe(true);
      // Sidecar mode: the janitor lives in the scaled pods, so they never go to zero.
      expect(min).toBe(1);
      expect(max as number).toBeGreaterThan(min as number);
      // A fallback holds the replicas when the backlog has no sample (lag unknown).
      expect(record(spec.fallback, "spec.fallback")).toMatchObject({
        failureThreshold: expect.any(Number) as number,
        replicas: expect.any(Number) as number,
      });
    });

    it("scales on the backlog gauge through the prometheus trigger, never reading no data as 0", () => {
      const triggers = scaledObject().triggers;
      expect(Array.isArray(triggers) && triggers.length === 1).toBe(true);
      const trigger = record((triggers as unknown[])[0], "triggers[0]");
      expect(trigger.type).toBe("prometheus");
      const metadata = record(trigger.metadata, "triggers[0].metadata");
      // KEDA reads trigger metadata as strings.
      for (const [key, value] of Object.entries(metadata)) expect(typeof value, key).toBe("string");
      expect(Object.keys(metadata).sort()).toEqual(
        ["activationThreshold", "ignoreNullValues", "query", "serverAddress", "threshold"].sort(),
      );
      expect(metadata.serverAddress).toMatch(/^https?:\/\/[^/\s]+$/u);
      expect(metadata.query).toBe(QUERY);
      expect(Number(metadata.threshold)).toBeGreaterThan(0);
      expect(Number(metadata.activationThreshold)).toBeGreaterThanOrEqual(0);
      expect(metadata.ignoreNullValues).toBe("false");
      const exported = new Set(
        Object.values(METRIC_TABLE).flatMap((section) =>
          Object.values(section).map((metric: { name: string }) => metric.name),
        ),
      );
      expect(metricNames(QUERY).filter((name) => !exported.has(name))).toEqual([]);
    });

    it("renders the other objects valid against their Kubernetes schemas", () => {
      const others = objects.filter((o) => o.kind !== "ScaledObject");
      expect(others.length).toBeGreaterThan(0);
      expect(others.flatMap(schemaProblems)).toEqual([]);
    });
  },
);
