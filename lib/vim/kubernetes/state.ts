// The Kubernetes driver's state, as it travels through the state machine: what the VNF has on the
// cluster (its namespace, the objects it created, the workload each VDU runs on when a blue-green
// gave it another name, the manifests it runs) plus what one operation carries between its steps.
// It comes back from outside, so it is parsed, and a state that does not parse is an empty one.
import * as z from 'zod';
import type { DriverState, OperationContext } from '#lib/vim/driver.ts';
import type { FlavourInfo } from '#lib/packages/vnfd/model.ts';
import type { ObjectRef } from './client.ts';
import { defFilesOf, WORKLOAD_KINDS } from './manifests.ts';

export const objectRefSchema = z.object({ apiVersion: z.string(), kind: z.string(), namespace: z.string().optional(), name: z.string() });

const replacedPod = z.object({
  vduId: z.string(),
  name: z.string(),
  /** The uid of the pod that must go (a StatefulSet's replacement has the same name). */
  uid: z.string().optional(),
  /** A bare Pod VDU: nothing recreates it but the driver. */
  recreate: z.boolean().optional(),
});

const stateSchema = z
  .object({
    namespace: z.string().optional(),
    objects: z.array(objectRefSchema).default([]),
    workloads: z.record(z.string(), z.string()).optional(),
    revisions: z.record(z.string(), z.string()).optional(),
    defFiles: z.array(z.string()).optional(),
    zones: z.record(z.string(), z.string()).optional(),
    /** Terminate: what must disappear, namespaces last. */
    deleting: z.array(objectRefSchema).optional(),
    /** Scale-in and heal: the pods that must be gone before the update is done. */
    replaced: z.array(replacedPod).optional(),
  })
  .passthrough();

export type ReplacedPod = z.infer<typeof replacedPod>;

/** What the driver carries between steps and keeps as the VNF's state. */
export interface KubernetesState {
  /** The VNF's namespace (unknown only in a state lost before instantiate recorded it). */
  namespace?: string;
  /** Every object this VNF has, in the order created. */
  objects: ObjectRef[];
  /**
   * VDU name (the manifests' workload name) -> the workload's name on the cluster, for the VDUs a
   * blue-green package change put on a workload of another name. A VDU not listed runs on the
   * workload of its own name.
   */
  workloads?: Record<string, string>;
  /** Workload name on the cluster -> the revision label its selector and pods carry (the workloads a blue-green created). */
  revisions?: Record<string, string>;
  /** The manifests the VNF runs since its last package change (else the instantiate request's). */
  defFiles?: string[];
  /** VDU name -> the zone the grants placed its pods in (a required node affinity on topology.kubernetes.io/zone). */
  zones?: Record<string, string>;
  deleting?: ObjectRef[];
  replaced?: ReplacedPod[];
  /** CHANGE_VNFPKG in progress (change-package.ts parses it). */
  change?: unknown;
  [key: string]: unknown;
}

export function stateOf(raw: DriverState): KubernetesState {
  const parsed = stateSchema.safeParse(raw ?? {});
  return parsed.success ? (parsed.data as KubernetesState) : { objects: [] };
}

/** The VNF's lasting state, without what one operation carried between its steps. */
export function lasting(state: KubernetesState): DriverState {
  const { deleting: _deleting, replaced: _replaced, change: _change, ...rest } = state;
  return { ...rest };
}

/** The workload a VDU (by its name) runs on. */
export function workloadRef(state: KubernetesState, vduName: string): ObjectRef | undefined {
  const name = state.workloads?.[vduName] ?? vduName;
  return state.objects.find((ref) => WORKLOAD_KINDS.has(ref.kind) && ref.name === name);
}

/** VDU name -> zone: where the operation's grant places each VDU's pods (its addResources' zones). */
export function grantedZones(ctx: Pick<OperationContext, 'vnfd' | 'flavourId' | 'grant'>, flavour: FlavourInfo): Record<string, string> {
  const zones: Record<string, string> = {};
  for (const vdu of flavour.vdus) {
    const zone = ctx.grant.vduZones && Object.hasOwn(ctx.grant.vduZones, vdu.id) ? ctx.grant.vduZones[vdu.id] : undefined;
    if (zone !== undefined) Object.defineProperty(zones, vdu.name, { value: zone, enumerable: true, writable: true, configurable: true });
  }
  return zones;
}

/** The package paths of the manifests the VNF runs now. */
export function currentDefFiles(ctx: OperationContext, state: KubernetesState): string[] {
  return state.defFiles?.length ? state.defFiles : defFilesOf(ctx.instantiateRequest);
}
