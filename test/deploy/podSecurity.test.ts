// The checkers the manifest tests rely on must be able to fail: each rule on a spec that breaks it.
import { describe, expect, it } from "vitest";
import { schemaProblems } from "./kubernetesSchemas.js";
import { restrictedViolations } from "./podSecurity.js";

const compliantContainer = {
  name: "app",
  image: "app:1.0.0",
  securityContext: {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ["ALL"] },
  },
};
const compliantPod = {
  securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
  containers: [compliantContainer],
  volumes: [{ name: "config", configMap: { name: "config" } }],
};

describe("restrictedViolations", () => {
  it("accepts a compliant pod", () => {
    expect(restrictedViolations(compliantPod)).toEqual([]);
  });

  it.each([
    ["hostNetwork", { ...compliantPod, hostNetwork: true }, "hostNetwork"],
    [
      "a hostPath volume",
      { ...compliantPod, volumes: [{ name: "host", hostPath: { path: "/" } }] },
      "hostPath",
    ],
    [
      "no runAsNonRoot",
      { ...compliantPod, securityContext: { seccompProfile: { type: "RuntimeDefault" } } },
      "runAsNonRoot",
    ],
    [
      "no seccomp profile",
      { ...compliantPod, securityContext: { runAsNonRoot: true } },
      "seccompProfile",
    ],
    [
      "privilege escalation",
      {
        ...compliantPod,
        containers: [
          { ...compliantContainer, securityContext: { capabilities: { drop: ["ALL"] } } },
        ],
      },
      "allowPrivilegeEscalation",
    ],
    [
      "capabilities kept",
      {
        ...compliantPod,
        containers: [
          { ...compliantContainer, securityContext: { allowPrivilegeEscalation: false } },
        ],
      },
      "drop ALL",
    ],
    [
      "an added capability",
      {
        ...compliantPod,
        initContainers: [
          {
            ...compliantContainer,
            name: "init",
            securityContext: {
              allowPrivilegeEscalation: false,
              capabilities: { drop: ["ALL"], add: ["NET_ADMIN"] },
            },
          },
        ],
      },
      "NET_ADMIN",
    ],
    [
      "a hostPort",
      {
        ...compliantPod,
        containers: [{ ...compliantContainer, ports: [{ containerPort: 80, hostPort: 80 }] }],
      },
      "hostPort",
    ],
    [
      "root",
      {
        ...compliantPod,
        containers: [
          {
            ...compliantContainer,
            securityContext: { ...compliantContainer.securityContext, runAsUser: 0 },
          },
        ],
      },
      "runAsUser",
    ],
  ])("flags %s", (_, podSpec, expected) => {
    expect(restrictedViolations(podSpec).join("\n")).toContain(expected);
  });
});

describe("schemaProblems", () => {
  const metadata = { name: "x" };
  it("accepts a valid object and flags a wrong type, a bad enum and an unknown kind", () => {
    expect(
      schemaProblems({
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata,
        automountServiceAccountToken: false,
      }),
    ).toEqual([]);
    expect(
      schemaProblems({
        apiVersion: "v1",
        kind: "Service",
        metadata,
        spec: { ports: [{ port: "not a number" }] },
      }).join(""),
    ).toContain("port");
    expect(
      schemaProblems({
        apiVersion: "policy/v1",
        kind: "PodDisruptionBudget",
        metadata,
        spec: { unhealthyPodEvictionPolicy: "Sometimes" },
      }).join(""),
    ).toContain("unhealthyPodEvictionPolicy");
    expect(schemaProblems({ apiVersion: "example.com/v1", kind: "Thing", metadata })).toHaveLength(
      1,
    );
  });
});
