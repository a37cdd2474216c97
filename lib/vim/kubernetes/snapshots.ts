// VNF snapshots on Kubernetes (SOL003 5.4.21, 5.4.22). A container has no disk of its own to copy: a
// CNF's snapshot is what the cluster runs, read from it (no object is created): each snapshotted
// VDU's workload as applied (its spec, labels and annotations) and the image digest each of its
// containers runs (the pods' status.containerStatuses[].imageID). Reverting re-applies those
// workloads with every container pinned to its digest and the replica count the snapshot had, and
// waits for their rollouts. Pods of one workload are alike, so a revert is of whole workloads.
import { log } from '#lib/log.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { DriverState, OperationContext, Progress, RevertTarget, SnapshotState, SnapshotTarget } from '#lib/vim/driver.ts';
import { flavourOf } from '#lib/vim/flavour.ts';
import { describeRef, KubeClient, KubernetesError, type KubeObject, type ObjectRef } from './client.ts';
import type { ManifestObject } from './manifests.ts';
import { applyObject, labelOf, progressOf, rollouts } from './objects.ts';
import { lasting, stateOf, workloadRef } from './state.ts';
import { isTerminating, nameOf, podsOf } from './workloads.ts';

/** A workload as the snapshot keeps it, and the image digest of each of its containers. */
export interface CapturedWorkload {
  vduId: string;
  ref: ObjectRef;
  manifest: ManifestObject;
  /** Container name -> image pinned by digest (repository@sha256:...). */
  images: Record<string, string>;
}

type KubernetesSnapshot = SnapshotState & { workloads?: CapturedWorkload[] };

/** Annotations the API server or its controllers write: not part of what was applied. */
const SERVER_ANNOTATIONS = ['deployment.kubernetes.io/revision', 'kubectl.kubernetes.io/last-applied-configuration'];

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The workload as applied: kind, name, labels, annotations and spec; nothing the cluster added (uid, status, versions). */
export function appliedManifest(workload: KubeObject): ManifestObject {
  const metadata = workload.metadata ?? {};
  const annotations = Object.fromEntries(Object.entries(metadata.annotations ?? {}).filter(([key]) => !SERVER_ANNOTATIONS.includes(key)));
  return {
    apiVersion: String(workload.apiVersion),
    kind: String(workload.kind),
    metadata: {
      name: String(metadata.name ?? ''),
      ...(metadata.namespace ? { namespace: metadata.namespace } : {}),
      ...(metadata.labels ? { labels: { ...metadata.labels } } : {}),
      ...(Object.keys(annotations).length ? { annotations } : {}),
    },
    spec: structuredClone(workload.spec),
  };
}

/** The image reference a container runs by digest, from its status imageID (docker-pullable://repo@sha256:..., repo@sha256:...). */
export function pinnedImage(imageId: string): string | undefined {
  const reference = imageId.replace(/^[a-z-]+:\/\//, '');
  return /@sha256:[0-9a-f]{64}$/.test(reference) ? reference : undefined;
}

/** The containers of a workload's pod template (or of a bare Pod). */
function containersOf(manifest: ManifestObject): Array<Record<string, unknown>> {
  const spec = isObject(manifest.spec) ? manifest.spec : {};
  const podSpec = manifest.kind === 'Pod' ? spec : isObject(spec.template) && isObject(spec.template.spec) ? spec.template.spec : {};
  return Array.isArray(podSpec.containers) ? podSpec.containers.filter(isObject) : [];
}

/** The workload to apply on revert: as captured, containers pinned to their digests, with the snapshot's replica count. */
export function revertedManifest(captured: CapturedWorkload, replicas: number | undefined): ManifestObject {
  const manifest = structuredClone(captured.manifest);
  for (const container of containersOf(manifest)) {
    const image = captured.images[String(container.name)];
    if (image) container.image = image;
  }
  if (replicas !== undefined && isObject(manifest.spec) && manifest.spec.replicas !== undefined) manifest.spec.replicas = replicas;
  return manifest;
}

export async function snapshotStart(ctx: OperationContext, raw: DriverState, target: SnapshotTarget): Promise<SnapshotState> {
  const state = stateOf(raw);
  const client = new KubeClient(ctx.vim);
  const label = labelOf(ctx);
  const flavour = flavourOf(ctx.vnfd, ctx.flavourId);
  const workloads: CapturedWorkload[] = [];
  for (const vduId of new Set(target.vnfcs.map((vnfc) => vnfc.vduId))) {
    const vdu = flavour.vdus.find((candidate) => candidate.id === vduId);
    const ref = vdu && workloadRef(state, vdu.name);
    const workload = ref && (await client.read(ref));
    if (!ref || !workload) throw new KubernetesError(`VDU ${vduId}: the VNF's workload ${ref ? describeRef(ref) : ''} no longer exists`);
    const named = new Set(target.vnfcs.filter((vnfc) => vnfc.vduId === vduId).map((vnfc) => vnfc.resourceId));
    const { pods } = await podsOf(client, workload, label);
    const images: Record<string, string> = {};
    for (const pod of pods.filter((candidate) => named.has(nameOf(candidate)) && !isTerminating(candidate))) {
      const statuses = (pod.status as { containerStatuses?: Array<{ name?: string; imageID?: string }> } | undefined)?.containerStatuses ?? [];
      for (const status of statuses) {
        const image = pinnedImage(status.imageID ?? '');
        if (status.name && image) images[status.name] ??= image;
      }
    }
    workloads.push({ vduId, ref, manifest: appliedManifest(workload), images });
  }
  const finishedAt = new Date().toISOString();
  log.info('kubernetes: snapshot of workloads', { vnfInstanceId: ctx.vnfInstanceId, workloads: workloads.map((workload) => describeRef(workload.ref)) });
  const snapshot: KubernetesSnapshot = {
    workloads,
    wholeVnfOnly: true,
    vnfcSnapshots: target.vnfcs.map((vnfc) => ({
      vnfcResourceInfoId: vnfc.vnfcResourceInfoId,
      vduId: vnfc.vduId,
      resourceId: vnfc.resourceId,
      storageSnapshotResources: [],
      finishedAt,
    })),
  };
  return snapshot;
}

/** Nothing to wait for: the snapshot was read from the cluster at the start. */
export async function snapshotPoll(_ctx: OperationContext, snapshot: SnapshotState): Promise<Progress> {
  return { status: 'DONE', state: { ...snapshot } };
}

/** Nothing on the cluster belongs to a snapshot. */
export async function deleteSnapshot(): Promise<void> {}

export async function revertStart(ctx: OperationContext, raw: DriverState, target: RevertTarget): Promise<DriverState> {
  if (target.only) {
    throw new UnprocessableEntityError('The pods of a Kubernetes workload are alike: revert the whole VNF to its snapshot, not one VNFC');
  }
  const state = stateOf(raw);
  const client = new KubeClient(ctx.vim);
  const label = labelOf(ctx);
  const workloads = (target.snapshot as KubernetesSnapshot).workloads ?? [];
  for (const captured of workloads) {
    const manifest = revertedManifest(captured, target.counts?.[captured.vduId]);
    log.info('kubernetes: reverting workload to its snapshot', {
      vnfInstanceId: ctx.vnfInstanceId,
      workload: describeRef(captured.ref),
      images: captured.images,
    });
    await applyObject(client, manifest, label, []);
  }
  return { ...state };
}

export async function revertPoll(ctx: OperationContext, raw: DriverState, target: RevertTarget): Promise<Progress> {
  const state = stateOf(raw);
  const refs = ((target.snapshot as KubernetesSnapshot).workloads ?? []).map((captured) => captured.ref);
  return progressOf(await rollouts(new KubeClient(ctx.vim), refs, labelOf(ctx)), state, lasting(state));
}
