import { execFile, execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const KUBECTL = process.env.KUBECTL ?? "kubectl";

/** A rendered Kubernetes object, as far as these tests look into it. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** Why the kustomize tests cannot run here, or undefined when kubectl (with kustomize) is there. */
export function kubectlMissing(): string | undefined {
  try {
    execFileSync(KUBECTL, ["kustomize", "--help"], { stdio: "ignore" });
    return undefined;
  } catch {
    return (
      `"${KUBECTL} kustomize" is not available, so the rendered manifests are not checked: ` +
      "install kubectl (>= 1.27, it embeds kustomize) or set KUBECTL to its path"
    );
  }
}

/** `kubectl kustomize DIR` (DIR relative to the repository), parsed into objects. */
export async function kustomize(dir: string): Promise<KubeObject[]> {
  const { stdout } = await promisify(execFile)(KUBECTL, ["kustomize", dir], {
    cwd: repoRoot,
    maxBuffer: 16 * 1024 * 1024,
  });
  return parseAllDocuments(stdout).map((document, index) => {
    const [error] = document.errors;
    if (error !== undefined) throw error;
    const object = document.toJS() as KubeObject;
    if (typeof object.kind !== "string" || typeof object.metadata?.name !== "string") {
      throw new Error(`${dir}: document ${index} is not a Kubernetes object`);
    }
    return object;
  });
}

export function kindAndName(object: KubeObject): string {
  return `${object.kind}/${object.metadata.name}`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The pod spec of a workload (Pod, Deployment, StatefulSet, DaemonSet, Job, CronJob), if any. */
export function podSpecOf(object: KubeObject): Record<string, unknown> | undefined {
  const spec = object.spec;
  if (!isRecord(spec)) return undefined;
  if (object.kind === "Pod") return spec;
  if (object.kind === "CronJob") {
    const job = isRecord(spec.jobTemplate) ? spec.jobTemplate.spec : undefined;
    const template = isRecord(job) ? job.template : undefined;
    return isRecord(template) && isRecord(template.spec) ? template.spec : undefined;
  }
  const template = spec.template;
  return isRecord(template) && isRecord(template.spec) ? template.spec : undefined;
}

export interface ContainerSpec {
  name: string;
  image?: string;
  command?: unknown;
  args?: string[];
  restartPolicy?: string;
  ports?: { name?: string; containerPort: number }[];
  securityContext?: Record<string, unknown>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: { name: string; mountPath: string }[];
  [field: string]: unknown;
}

/** Every container of a pod spec: init, regular and ephemeral. */
export function containersOf(podSpec: Record<string, unknown>): ContainerSpec[] {
  return ["initContainers", "containers", "ephemeralContainers"].flatMap((field) => {
    const list = podSpec[field];
    return Array.isArray(list) ? (list as ContainerSpec[]) : [];
  });
}
