// The Kubernetes manifests as a cluster would receive them: every kustomization rendered with
// `kubectl kustomize`, each object checked against its schema, the restricted Pod Security
// Standard, the image policy and the wiring between objects. Without kubectl the rendering tests
// are skipped with the reason in their name (.ci/run does not install kubectl: no distribution
// package is standard for it).
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/daemonProcess.js";
import { imageNodeOptions } from "./dockerfile.js";
import { schemaProblems } from "./kubernetesSchemas.js";
import {
  containersOf,
  isRecord,
  kindAndName,
  kubectlMissing,
  kustomize,
  podSpecOf,
  repoRoot,
  type ContainerSpec,
  type KubeObject,
} from "./kustomize.js";
import { restrictedViolations } from "./podSecurity.js";

const KUSTOMIZATIONS = ["base", "overlays/deployment", "overlays/sidecar"] as const;
const IMAGE = "stream-janitor";
const missing = kubectlMissing();
const rendered = new Map<string, KubeObject[]>();

async function packageVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

/** The image's `--max-old-space-size` (MB), from the Dockerfile's final stage. */
async function imageHeapCapMb(): Promise<number> {
  const options = imageNodeOptions(await readFile(join(repoRoot, "Dockerfile"), "utf8"));
  const cap = /--max-old-space-size=(\d+)/u.exec(options)?.[1];
  if (cap === undefined) throw new Error("the image sets no --max-old-space-size");
  return Number(cap);
}

/** A Kubernetes memory quantity in MiB (the manifests use Mi and Gi). */
function mebibytes(quantity: string): number {
  const match = /^(\d+)(Mi|Gi)$/u.exec(quantity);
  if (match === null) throw new Error(`unexpected memory quantity ${quantity}`);
  return Number(match[1]) * (match[2] === "Gi" ? 1024 : 1);
}

function objects(dir: (typeof KUSTOMIZATIONS)[number]): KubeObject[] {
  const list = rendered.get(dir);
  if (list === undefined) throw new Error(`${dir} was not rendered`);
  return list;
}

/** Every janitor container of every rendered kustomization, with where it was found. */
function janitorContainers(): { where: string; container: ContainerSpec }[] {
  return KUSTOMIZATIONS.flatMap((dir) =>
    objects(dir).flatMap((object) => {
      const podSpec = podSpecOf(object);
      return podSpec === undefined
        ? []
        : containersOf(podSpec)
            .filter((container) => container.name === "stream-janitor")
            .map((container) => ({ where: `${dir}: ${kindAndName(object)}`, container }));
    }),
  );
}

function find(list: KubeObject[], kind: string, name?: string): KubeObject {
  const found = list.find(
    (o) => o.kind === kind && (name === undefined || o.metadata.name === name),
  );
  if (found === undefined) throw new Error(`no ${kind}${name === undefined ? "" : `/${name}`}`);
  return found;
}

function spec(object: KubeObject): Record<string, unknown> {
  if (!isRecord(object.spec)) throw new Error(`${kindAndName(object)}: no spec`);
  return object.spec;
}

function matches(selector: unknown, labels: Record<string, string> | undefined): boolean {
  const wanted = isRecord(selector) && isRecord(selector.matchLabels) ? selector.matchLabels : {};
  return (
    Object.keys(wanted).length > 0 &&
    Object.entries(wanted).every(([key, value]) => labels?.[key] === value)
  );
}

function podTemplateLabels(workload: KubeObject): Record<string, string> | undefined {
  const template = spec(workload).template;
  return isRecord(template) && isRecord(template.metadata)
    ? (template.metadata.labels as Record<string, string>)
    : undefined;
}

describe.skipIf(missing !== undefined)(
  `kubectl kustomize deploy/kubernetes${missing === undefined ? "" : ` (skipped: ${missing})`}`,
  () => {
    beforeAll(async () => {
      for (const dir of KUSTOMIZATIONS) {
        rendered.set(dir, await kustomize(`deploy/kubernetes/${dir}`));
      }
    });

    it("renders every kustomization into the expected objects", () => {
      const lists = Object.fromEntries(
        KUSTOMIZATIONS.map((dir) => [dir, objects(dir).map(kindAndName).sort()]),
      );
      // ConfigMaps carry a hash of their content: compare their names without it.
      const unhashed = (list: string[]) => list.map((n) => n.replace(/-[a-z0-9]{10}$/u, "-<hash>"));
      const janitor = [
        "ConfigMap/stream-janitor-<hash>",
        "Deployment/stream-janitor",
        "NetworkPolicy/stream-janitor",
        "PodDisruptionBudget/stream-janitor",
        "Service/stream-janitor",
        "ServiceAccount/stream-janitor",
      ];
      const monitoring = [
        "PodMonitor/stream-janitor-sidecars",
        "PrometheusRule/stream-janitor",
        "ServiceMonitor/stream-janitor",
      ];
      expect(unhashed(lists.base ?? [])).toEqual(janitor);
      expect(unhashed(lists["overlays/deployment"] ?? [])).toEqual(
        [...janitor, ...monitoring].sort(),
      );
      expect(unhashed(lists["overlays/sidecar"] ?? [])).toEqual(
        [
          "ConfigMap/stream-janitor-sidecar-<hash>",
          "Deployment/orders-billing-consumer",
          ...monitoring,
        ].sort(),
      );
    });

    it("renders objects that validate against the Kubernetes schemas", () => {
      for (const dir of KUSTOMIZATIONS) {
        expect(objects(dir).flatMap(schemaProblems), dir).toEqual([]);
      }
    });

    it("passes the restricted Pod Security Standard", () => {
      for (const dir of KUSTOMIZATIONS) {
        for (const object of objects(dir)) {
          const podSpec = podSpecOf(object);
          if (podSpec === undefined) continue;
          expect(restrictedViolations(podSpec), `${dir}: ${kindAndName(object)}`).toEqual([]);
        }
      }
    });

    it("runs the image by its version tag, through its own entrypoint", async () => {
      const version = await packageVersion();
      let janitors = 0;
      for (const dir of KUSTOMIZATIONS) {
        for (const object of objects(dir)) {
          const podSpec = podSpecOf(object);
          if (podSpec === undefined) continue;
          for (const container of containersOf(podSpec)) {
            const where = `${dir}: ${kindAndName(object)} container ${container.name}`;
            const image = container.image ?? "";
            expect(image, `${where}: image by tag`).toMatch(/^[^:@]+(?::\d[\w.-]*|@sha256:\w+)$/u);
            expect(image, where).not.toMatch(/:latest$/u);
            if (!image.startsWith(`${IMAGE}:`)) continue;
            janitors += 1;
            expect(image, `${where}: the package version`).toBe(`${IMAGE}:${version}`);
            expect(container.command, `${where}: no command: override`).toBeUndefined();
            expect(container.args?.[0], where).toBe("run");
          }
        }
      }
      expect(janitors).toBe(3);
    });

    it("gives every janitor container measured memory and CPU settings", () => {
      const janitors = janitorContainers();
      expect(janitors).toHaveLength(3);
      for (const { where, container } of janitors) {
        expect(container.resources?.requests?.memory, where).toBeDefined();
        expect(container.resources?.limits?.memory, where).toBeDefined();
        expect(container.resources?.requests?.cpu, where).toBeDefined();
      }
    });

    it.each([
      ["base", "Deployment", "stream-janitor", "redis-tls", "base/config.yaml"],
      [
        "overlays/sidecar",
        "Deployment",
        "orders-billing-consumer",
        "stream-janitor-redis-tls",
        "components/sidecar/sidecar-config.yaml",
      ],
    ] as const)(
      "%s mounts the CA and client certificate from an optional Secret where its config names them",
      async (dir, kind, name, volumeName, configFile) => {
        const podSpec = podSpecOf(find(objects(dir), kind, name)) ?? {};
        const volumes = (Array.isArray(podSpec.volumes) ? podSpec.volumes : []) as unknown[];
        expect(volumes).toContainEqual({
          name: volumeName,
          secret: { secretName: "stream-janitor-redis-tls", optional: true, defaultMode: 0o440 },
        });
        const janitor = containersOf(podSpec).find((c) => c.name === "stream-janitor");
        const mount = janitor?.volumeMounts?.find((m) => m.name === volumeName);
        expect(mount?.mountPath).toBe("/var/run/secrets/stream-janitor/tls");
        const config = await readFile(join(repoRoot, "deploy/kubernetes", configFile), "utf8");
        for (const [key, file] of [
          ["caFile", "ca.crt"],
          ["certFile", "tls.crt"],
          ["keyFile", "tls.key"],
        ]) {
          expect(config).toContain(`#   ${key ?? ""}: ${mount?.mountPath ?? "?"}/${file ?? ""}`);
        }
      },
    );

    it("keeps the image's heap cap within two thirds of every janitor's memory limit", async () => {
      const heapCapMb = await imageHeapCapMb();
      const janitors = janitorContainers();
      expect(janitors).toHaveLength(3);
      for (const { where, container } of janitors) {
        const env = Array.isArray(container.env) ? container.env : [];
        // A NODE_OPTIONS of the manifest would replace the image's, cap included.
        expect(
          env.filter((e) => isRecord(e) && e.name === "NODE_OPTIONS"),
          where,
        ).toEqual([]);
        const limitMb = mebibytes(container.resources?.limits?.memory ?? "0");
        expect(heapCapMb, where).toBeLessThanOrEqual((2 / 3) * limitMb);
      }
    });

    it("mounts only ConfigMaps that are rendered with it", () => {
      for (const dir of KUSTOMIZATIONS) {
        const configMaps = new Set(
          objects(dir)
            .filter((o) => o.kind === "ConfigMap")
            .map((o) => o.metadata.name),
        );
        for (const object of objects(dir)) {
          const volumes = podSpecOf(object)?.volumes;
          for (const volume of Array.isArray(volumes) ? volumes : []) {
            if (!isRecord(volume) || !isRecord(volume.configMap)) continue;
            expect(configMaps, `${dir}: ${kindAndName(object)}`).toContain(volume.configMap.name);
          }
        }
      }
    });

    it("runs two replicas, lets drains evict unhealthy pods, and allows only Redis, DNS and metrics traffic", () => {
      const list = objects("overlays/deployment");
      const deployment = find(list, "Deployment", "stream-janitor");
      expect(spec(deployment).replicas).toBe(2);
      const labels = podTemplateLabels(deployment);

      const budget = spec(find(list, "PodDisruptionBudget"));
      expect(budget.unhealthyPodEvictionPolicy).toBe("AlwaysAllow");
      expect(budget.maxUnavailable).toBe(1);
      expect(matches(budget.selector, labels)).toBe(true);

      const policy = spec(find(list, "NetworkPolicy"));
      expect(matches(policy.podSelector, labels)).toBe(true);
      expect(policy.policyTypes).toEqual(["Ingress", "Egress"]);
      const ports = (rules: unknown) =>
        (Array.isArray(rules) ? rules : []).flatMap((rule: unknown) =>
          isRecord(rule) && Array.isArray(rule.ports)
            ? rule.ports.map((p: unknown) =>
                isRecord(p) ? `${String(p.protocol)}/${String(p.port)}` : "",
              )
            : ["any port"],
        );
      expect(ports(policy.ingress)).toEqual(["TCP/http-metrics"]);
      expect(ports(policy.egress).sort()).toEqual(["TCP/26379", "TCP/53", "TCP/6379", "UDP/53"]);

      const account = find(list, "ServiceAccount", "stream-janitor");
      expect(account.automountServiceAccountToken).toBe(false);
      expect(podSpecOf(deployment)?.serviceAccountName).toBe("stream-janitor");
    });

    it("scrapes the Deployment through its Service and the sidecars through their pods", () => {
      const list = objects("overlays/deployment");
      const service = find(list, "Service", "stream-janitor");
      const monitor = spec(find(list, "ServiceMonitor"));
      expect(matches(monitor.selector, service.metadata.labels)).toBe(true);
      const servicePorts = (spec(service).ports as { name: string }[]).map((p) => p.name);
      for (const endpoint of monitor.endpoints as { port: string }[]) {
        expect(servicePorts).toContain(endpoint.port);
      }

      const sidecarList = objects("overlays/sidecar");
      const consumer = find(sidecarList, "Deployment", "orders-billing-consumer");
      const podMonitor = spec(find(sidecarList, "PodMonitor"));
      expect(matches(podMonitor.selector, podTemplateLabels(consumer))).toBe(true);
      const podPorts = containersOf(podSpecOf(consumer) ?? {}).flatMap((c) =>
        (c.ports ?? []).map((p) => p.name),
      );
      for (const endpoint of podMonitor.podMetricsEndpoints as { port: string }[]) {
        expect(podPorts).toContain(endpoint.port);
      }
    });

    it("adds the janitor to the consumer as a native sidecar", () => {
      const consumer = find(objects("overlays/sidecar"), "Deployment", "orders-billing-consumer");
      const podSpec = podSpecOf(consumer) ?? {};
      const sidecars = (podSpec.initContainers ?? []) as { name: string; restartPolicy?: string }[];
      expect(sidecars.map((c) => [c.name, c.restartPolicy])).toEqual([
        ["stream-janitor", "Always"],
      ]);
      const containers = (podSpec.containers ?? []) as { name: string }[];
      expect(containers.map((c) => c.name)).toEqual(["consumer"]);
    });

    it("carries the generated PrometheusRule in the monitoring component", async () => {
      const rule = find(objects("overlays/deployment"), "PrometheusRule");
      const source = (await import("yaml")).parse(
        await readFile(join(repoRoot, "deploy/prometheus/stream-janitor.rules.yml"), "utf8"),
      ) as { groups: unknown };
      expect(spec(rule).groups).toEqual(source.groups);
    });
  },
);

describe("janitor configuration files of the manifests", () => {
  it.each([
    "deploy/kubernetes/base/config.yaml",
    "deploy/kubernetes/components/sidecar/sidecar-config.yaml",
  ])("%s passes check-config", async (file) => {
    // --offline: the file alone; its Redis lives in the cluster the manifests deploy to.
    const result = await runCli(["check-config", "--offline", "--config", join(repoRoot, file)]);
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
  });
});
