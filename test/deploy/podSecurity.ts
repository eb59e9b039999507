import { containersOf, isRecord } from "./kustomize.js";

/** Volume types the restricted Pod Security Standard allows. */
const RESTRICTED_VOLUME_TYPES: ReadonlySet<string> = new Set([
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
]);
const SAFE_SYSCTLS: ReadonlySet<string> = new Set([
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
]);
const SELINUX_TYPES: ReadonlySet<string> = new Set([
  "",
  "container_t",
  "container_init_t",
  "container_kvm_t",
  "container_engine_t",
]);

function record(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/**
 * The rules of the restricted Pod Security Standard (Kubernetes 1.30 policy, baseline included)
 * that a pod spec breaks; empty when it complies. Mirrors the admission controller's checks, so a
 * manifest that passes here is admitted into a namespace labelled
 * pod-security.kubernetes.io/enforce=restricted.
 */
export function restrictedViolations(podSpec: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const pod = record(podSpec.securityContext);
  for (const field of ["hostNetwork", "hostPID", "hostIPC"]) {
    if (podSpec[field] === true) problems.push(`${field} must not be true`);
  }
  for (const volume of Array.isArray(podSpec.volumes) ? podSpec.volumes : []) {
    const types = Object.keys(record(volume)).filter((key) => key !== "name");
    for (const type of types) {
      if (!RESTRICTED_VOLUME_TYPES.has(type)) {
        problems.push(`volume ${String(record(volume).name)}: type ${type} is not allowed`);
      }
    }
  }
  for (const sysctl of Array.isArray(pod.sysctls) ? pod.sysctls : []) {
    const name = String(record(sysctl).name);
    if (!SAFE_SYSCTLS.has(name)) problems.push(`sysctl ${name} is not allowed`);
  }
  if (pod.runAsUser === 0) problems.push("pod runAsUser must not be 0");
  problems.push(...seLinuxProblems("pod", pod.seLinuxOptions));
  problems.push(...appArmorProblems("pod", pod.appArmorProfile));
  const podSeccomp = text(record(pod.seccompProfile).type);
  if (podSeccomp !== undefined && !["RuntimeDefault", "Localhost"].includes(podSeccomp)) {
    problems.push(`pod seccompProfile ${podSeccomp} is not allowed`);
  }

  for (const container of containersOf(podSpec)) {
    const where = `container ${container.name}`;
    const context = record(container.securityContext);
    if (context.privileged === true) problems.push(`${where}: privileged`);
    if (context.allowPrivilegeEscalation !== false) {
      problems.push(`${where}: allowPrivilegeEscalation must be false`);
    }
    const runAsNonRoot = context.runAsNonRoot ?? pod.runAsNonRoot;
    if (runAsNonRoot !== true) problems.push(`${where}: runAsNonRoot must be true`);
    if (context.runAsUser === 0) problems.push(`${where}: runAsUser must not be 0`);
    const seccomp = text(record(context.seccompProfile).type) ?? podSeccomp ?? "";
    if (!["RuntimeDefault", "Localhost"].includes(seccomp)) {
      problems.push(`${where}: seccompProfile must be RuntimeDefault or Localhost`);
    }
    const capabilities = record(context.capabilities);
    const drop = Array.isArray(capabilities.drop) ? capabilities.drop : [];
    if (!drop.includes("ALL")) problems.push(`${where}: capabilities must drop ALL`);
    const add = Array.isArray(capabilities.add) ? capabilities.add : [];
    for (const capability of add) {
      if (capability !== "NET_BIND_SERVICE") {
        problems.push(`${where}: capability ${String(capability)} may not be added`);
      }
    }
    if (context.procMount !== undefined && context.procMount !== "Default") {
      problems.push(`${where}: procMount must be Default`);
    }
    problems.push(...seLinuxProblems(where, context.seLinuxOptions));
    problems.push(...appArmorProblems(where, context.appArmorProfile));
    for (const port of container.ports ?? []) {
      const hostPort = record(port).hostPort;
      if (hostPort !== undefined && hostPort !== 0) problems.push(`${where}: hostPort`);
    }
  }
  return problems;
}

function seLinuxProblems(where: string, options: unknown): string[] {
  const selinux = record(options);
  const problems: string[] = [];
  if (!SELINUX_TYPES.has(text(selinux.type) ?? "")) problems.push(`${where}: SELinux type`);
  if (selinux.user !== undefined || selinux.role !== undefined) {
    problems.push(`${where}: SELinux user/role must not be set`);
  }
  return problems;
}

function appArmorProblems(where: string, profile: unknown): string[] {
  const type = record(profile).type;
  return type === "Unconfined" ? [`${where}: AppArmor must not be Unconfined`] : [];
}
