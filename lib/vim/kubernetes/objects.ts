// Applying and removing a VNF's objects, and reading whether its workloads have rolled out: the
// pieces every step of the Kubernetes driver shares (instantiate, scale/heal, package change).
import type { DriverState, OperationContext, Progress } from '#lib/vim/driver.ts';
import { describeRef, KubernetesError, statusOf, type KubeClient, type KubeObject, type ObjectRef } from './client.ts';
import { applyRank, instanceLabelValue, VNF_INSTANCE_LABEL, type ManifestObject } from './manifests.ts';
import type { KubernetesState } from './state.ts';
import { podsOf, rolloutOf, type Rollout } from './workloads.ts';
import { isRecord as isObj } from '#lib/json.ts';

export const refOf = (object: ManifestObject | KubeObject): ObjectRef => ({
  apiVersion: String(object.apiVersion),
  kind: String(object.kind),
  ...(object.metadata?.namespace ? { namespace: String(object.metadata.namespace) } : {}),
  name: String(object.metadata?.name),
});
export const keyOf = (ref: ObjectRef): string => `${ref.apiVersion}/${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
export const podRef = (namespace: string | undefined, name: string): ObjectRef => ({
  apiVersion: 'v1',
  kind: 'Pod',
  ...(namespace ? { namespace } : {}),
  name,
});
export const labelOf = (ctx: OperationContext): string => instanceLabelValue(ctx.vnfInstanceId);
export const ownedBy = (object: KubeObject | undefined, label: string): boolean => object?.metadata?.labels?.[VNF_INSTANCE_LABEL] === label;

/**
 * Creates one object and records it. A 409 is a retried step finding its own object, or a package
 * change updating one, which is replaced by the manifest's version; an object of that name the VNF
 * does not own is never taken over (a namespace that already exists is simply used).
 */
export async function applyObject(client: KubeClient, object: ManifestObject, label: string, created: ObjectRef[]): Promise<void> {
  const ref = refOf(object);
  try {
    await client.create(object as KubeObject);
    created.push(ref);
    return;
  } catch (error) {
    if (statusOf(error) !== 409) throw error;
  }
  // Controllers write status meanwhile: a replace that loses that race reads again and retries.
  for (let attempt = 1; ; attempt += 1) {
    const existing = await client.read(ref);
    if (!existing) throw new KubernetesError(`creating ${describeRef(ref)}: the API server answered 409 but has no object of that name`, { vimStatus: 409 });
    if (!ownedBy(existing, label)) {
      if (ref.kind === 'Namespace') return;
      throw new KubernetesError(`${describeRef(ref)} already exists and does not belong to this VNF instance (no ${VNF_INSTANCE_LABEL}=${label} label)`, {
        vimStatus: 409,
      });
    }
    if (ref.kind === 'Namespace') break;
    try {
      await client.replace(replacementOf(object, existing));
      break;
    } catch (error) {
      if (statusOf(error) !== 409 || attempt >= REPLACE_ATTEMPTS) throw error;
    }
  }
  created.push(ref);
}

const REPLACE_ATTEMPTS = 5;

/**
 * The manifest's object as a replacement of the existing one: its resourceVersion, and what the
 * cluster allocated to a Service that the manifest leaves out (its immutable cluster IPs, and its
 * node ports, which a replace without them would allocate anew, moving the VNF's external port).
 */
function replacementOf(object: ManifestObject, existing: KubeObject): KubeObject {
  const replacement = structuredClone(object) as KubeObject & ManifestObject;
  replacement.metadata.resourceVersion = existing.metadata?.resourceVersion;
  if (object.kind === 'Service') {
    const spec = isObj(replacement.spec) ? replacement.spec : {};
    const current = isObj(existing.spec) ? existing.spec : {};
    spec.clusterIP ??= current.clusterIP;
    spec.clusterIPs ??= current.clusterIPs;
    const allocated = Array.isArray(current.ports) ? current.ports.filter(isObj) : [];
    if (Array.isArray(spec.ports)) {
      spec.ports = spec.ports.map((port: unknown) => {
        if (!isObj(port) || port.nodePort !== undefined) return port;
        const same = allocated.find((candidate) => candidate.port === port.port && (candidate.protocol ?? 'TCP') === (port.protocol ?? 'TCP'));
        return same?.nodePort !== undefined ? { ...port, nodePort: same.nodePort } : port;
      });
    }
    if (spec.healthCheckNodePort === undefined && current.healthCheckNodePort !== undefined) spec.healthCheckNodePort = current.healthCheckNodePort;
    replacement.spec = spec;
  }
  return replacement;
}

/** Deletes in reverse dependency order: workloads (and with them their pods) first, namespaces last. */
export function removalOrder(refs: ObjectRef[]): ObjectRef[] {
  return refs
    .map((ref, index) => ({ ref, index }))
    .sort((a, b) => applyRank(b.ref.kind) - applyRank(a.ref.kind) || b.index - a.index)
    .map(({ ref }) => ref);
}

export async function deleteObject(client: KubeClient, ref: ObjectRef): Promise<boolean> {
  // Foreground: the object stays visible until its dependents (ReplicaSets, pods) are gone, so
  // the poll that waits for it waits for them too.
  return client.delete(ref, ref.kind === 'Pod' || ref.kind === 'Namespace' ? {} : { propagationPolicy: 'Foreground' });
}

/** Every workload's rollout: the first failure, else the first wait, else DONE. */
export async function rollouts(client: KubeClient, refs: ObjectRef[], label: string): Promise<Rollout> {
  let pending: Rollout | undefined;
  for (const ref of refs) {
    const workload = await client.read(ref);
    if (!workload) return { status: 'FAILED', reason: `${describeRef(ref)} no longer exists` };
    const rollout = rolloutOf(workload, await podsOf(client, workload, label));
    if (rollout.status === 'FAILED') return rollout;
    if (rollout.status === 'IN_PROGRESS') pending ??= rollout;
  }
  return pending ?? { status: 'DONE' };
}

export function progressOf(rollout: Rollout, state: KubernetesState, done: DriverState): Progress {
  if (rollout.status === 'FAILED') return { status: 'FAILED', state: { ...state }, reason: rollout.reason };
  if (rollout.status === 'IN_PROGRESS') return { status: 'IN_PROGRESS', state: { ...state } };
  return { status: 'DONE', state: done };
}
