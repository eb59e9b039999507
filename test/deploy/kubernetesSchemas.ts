import * as monitoringV1 from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";
import * as appsV1 from "kubernetes-models/apps/v1";
import * as networkingV1 from "kubernetes-models/networking.k8s.io/v1";
import * as policyV1 from "kubernetes-models/policy/v1";
import * as coreV1 from "kubernetes-models/v1";
import type { KubeObject } from "./kustomize.js";

type Model = new (data: unknown) => { validate(): void };

/** The API groups the manifests may use, with the models (JSON schemas) of their kinds. */
const MODELS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  v1: coreV1,
  "apps/v1": appsV1,
  "policy/v1": policyV1,
  "networking.k8s.io/v1": networkingV1,
  "monitoring.coreos.com/v1": monitoringV1,
};

/**
 * Validates an object against the Kubernetes (and Prometheus Operator) schema of its kind; returns
 * the problems, empty when valid. An unknown apiVersion or kind is a problem too. The schemas check
 * types, enums and required fields; like the API server's non-strict mode, they ignore fields they
 * do not know.
 */
export function schemaProblems(object: KubeObject): string[] {
  const where = `${object.apiVersion} ${object.kind}/${object.metadata.name}`;
  const group = MODELS[object.apiVersion];
  const model = group?.[object.kind] as Model | undefined;
  if (typeof model !== "function") return [`${where}: no schema for this apiVersion and kind`];
  try {
    new model(object).validate();
    return [];
  } catch (error) {
    return [`${where}: ${error instanceof Error ? error.message : String(error)}`];
  }
}
