// OPERATE on Kubernetes (SOL003 5.4.10). Kubernetes has no "stopped" pod: a VNFC stops by leaving
// the cluster. So a stop scales the VDU's workload (Deployment, StatefulSet, ReplicaSet) to 0
// replicas, remembering its replica count in the driver state, and a start scales it back; a bare
// Pod VDU is deleted by a stop and recreated from the package's manifest by a start (the manifest is
// read again rather than kept: a pod spec may carry values that must not be stored in records).
// The unit of a start or stop is the whole workload: one pod of several replicas cannot be stopped
// alone (operateRefusal says so at the request).
//
// GRACEFUL and FORCEFUL: scaling to 0 lets the kubelet stop each pod as the pod says (SIGTERM, then
// SIGKILL after its terminationGracePeriodSeconds). FORCEFUL then deletes the pods at once
// (gracePeriodSeconds 0); GRACEFUL does that only to the pods still there once gracefulStopTimeout
// has passed.
//
// While stopped, the VNFCs stay on record (vnfcState STOPPED) under the names and uids they had, so
// that the instance still shows them and a start can name them; health() knows them as stopped.
import * as z from 'zod';
import { log } from '#lib/log.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { DriverState, OperateChange, OperationContext, Progress } from '#lib/vim/driver.ts';
import { flavourOf } from '#lib/vim/flavour.ts';
import { describeRef, KubeClient, KubernetesError, statusOf, type ObjectRef } from './client.ts';
import { REPLICATED_KINDS } from './manifests.ts';
import { labelOf, podRef, rollouts } from './objects.ts';
import { objectRefSchema, stateOf, workloadRef, type KubernetesState } from './state.ts';
import { nameOf, podsOf, uidOf } from './workloads.ts';

/** The kinds whose VNFCs an OPERATE can stop and start. */
const OPERABLE_KINDS: ReadonlySet<string> = new Set([...REPLICATED_KINDS, 'Pod']);

const stoppedWorkload = z.object({
  vduId: z.string(),
  ref: objectRefSchema,
  /** The replica count to scale back to (a bare Pod has none). */
  replicas: z.number().int().nonnegative().optional(),
  /** The pods it had when stopped: its VNFCs while it is stopped. */
  pods: z.array(z.object({ name: z.string(), uid: z.string().optional(), created: z.string().optional() })),
});
export type StoppedWorkload = z.infer<typeof stoppedWorkload>;

const operationSchema = z.object({
  changeStateTo: z.enum(['STARTED', 'STOPPED']),
  /** The workloads (names on the cluster) this operation starts or stops. */
  workloads: z.array(z.string()),
  forceful: z.boolean().optional(),
  /** GRACEFUL: when gracefulStopTimeout runs out (RFC 3339). */
  deadline: z.string().optional(),
});
type Operation = z.infer<typeof operationSchema>;

/** The workloads the VNFM stopped on purpose, from the driver state. */
export function stoppedWorkloads(raw: DriverState): StoppedWorkload[] {
  const parsed = z.array(stoppedWorkload).safeParse(raw?.stopped);
  return parsed.success ? parsed.data : [];
}

/** The pod names of VNFCs stopped on purpose. */
export function stoppedPods(raw: DriverState): Set<string> {
  return new Set(stoppedWorkloads(raw).flatMap((workload) => workload.pods.map((pod) => pod.name)));
}

type Info = Record<string, unknown>;

/**
 * Why these VNFCs cannot be started or stopped on their own: a workload's pods go and come back
 * together, so a choice must hold all of a workload's VNFCs or none; and only workloads with a
 * replica count, or bare Pods, can be stopped.
 */
export function operateRefusal(vnfcResourceInfo: Info[], change: OperateChange): string | undefined {
  const chosen = new Set(change.vnfcs.map((vnfc) => vnfc.resourceId));
  const workloadOf = (vnfc: Info) => String((vnfc.metadata as Info | undefined)?.workload ?? vnfc.vduId);
  const resourceOf = (vnfc: Info) => String((vnfc.computeResource as Info | undefined)?.resourceId ?? vnfc.id);
  const byWorkload = new Map<string, Info[]>();
  for (const vnfc of vnfcResourceInfo) byWorkload.set(workloadOf(vnfc), [...(byWorkload.get(workloadOf(vnfc)) ?? []), vnfc]);
  for (const [workload, vnfcs] of byWorkload) {
    const named = vnfcs.filter((vnfc) => chosen.has(resourceOf(vnfc)));
    if (named.length === 0) continue;
    const kind = String((named[0]?.computeResource as Info | undefined)?.vimLevelResourceType ?? workload.split('/')[0]);
    if (!OPERABLE_KINDS.has(kind)) {
      return `VNFC ${resourceOf(named[0] ?? {})} is a pod of ${workload}; a ${kind} has no replica count to scale to 0, so it cannot be stopped or started`;
    }
    if (named.length < vnfcs.length) {
      const missing = vnfcs.filter((vnfc) => !chosen.has(resourceOf(vnfc))).map(resourceOf);
      return `VNFC(s) ${named.map(resourceOf).join(', ')} are ${named.length} of the ${vnfcs.length} pods of ${workload}; a pod of a multi-replica workload cannot be started or stopped alone (its replica count is what changes): name all its VNFCs (also ${missing.join(', ')}) or none`;
    }
  }
  return undefined;
}

function workloadOfVdu(ctx: OperationContext, state: KubernetesState, vduId: string): ObjectRef {
  const vdu = flavourOf(ctx.vnfd, ctx.flavourId).vdus.find((candidate) => candidate.id === vduId);
  if (!vdu) throw new UnprocessableEntityError(`flavour ${ctx.flavourId} has no VDU ${vduId}`);
  const ref = workloadRef(state, vdu.name);
  if (!ref) throw new KubernetesError(`VDU ${vduId}: the VNF has no workload named ${vdu.name}`);
  return ref;
}

function operationOf(state: KubernetesState): Operation | undefined {
  const parsed = operationSchema.safeParse(state.operate);
  return parsed.success ? parsed.data : undefined;
}

async function deletePodNow(client: KubeClient, namespace: string | undefined, name: string): Promise<void> {
  try {
    await client.delete(podRef(namespace, name), { gracePeriodSeconds: 0 });
  } catch (error) {
    if (statusOf(error) !== 404) throw error;
  }
}

/** Helpers of the driver an OPERATE start needs (a bare Pod is recreated as a heal recreates it). */
export interface OperateHelpers {
  recreatePod(ctx: OperationContext, client: KubeClient, state: KubernetesState, name: string): Promise<void>;
}

export async function operateStart(ctx: OperationContext, raw: DriverState, change: OperateChange, helpers: OperateHelpers): Promise<DriverState> {
  const state = stateOf(raw);
  const client = new KubeClient(ctx.vim);
  const label = labelOf(ctx);
  const stopped = stoppedWorkloads(state);
  const names: string[] = [];
  for (const vduId of new Set(change.vnfcs.map((vnfc) => vnfc.vduId))) {
    const ref = workloadOfVdu(ctx, state, vduId);
    names.push(ref.name);
    const remembered = stopped.find((entry) => entry.ref.name === ref.name);
    if (change.changeStateTo === 'STOPPED') {
      if (remembered) continue; // stopped already (or by an earlier attempt of this operation)
      if (!OPERABLE_KINDS.has(ref.kind)) throw new UnprocessableEntityError(`VDU ${vduId} is a ${ref.kind}, which cannot be stopped`);
      const workload = await client.read(ref);
      if (!workload) throw new KubernetesError(`VDU ${vduId}: ${describeRef(ref)} no longer exists`, { vimStatus: 404 });
      const { pods } = await podsOf(client, workload, label);
      const spec = (workload.spec ?? {}) as { replicas?: number };
      const entry: StoppedWorkload = {
        vduId,
        ref,
        ...(ref.kind === 'Pod' ? {} : { replicas: spec.replicas || change.vnfcs.filter((vnfc) => vnfc.vduId === vduId).length || 1 }),
        pods: pods.map((pod) => ({
          name: nameOf(pod),
          ...(uidOf(pod) ? { uid: uidOf(pod) } : {}),
          ...(pod.metadata?.creationTimestamp ? { created: String(pod.metadata.creationTimestamp) } : {}),
        })),
      };
      // Remembered before anything changes, so that a failed attempt still knows the count to restore.
      stopped.push(entry);
      log.info('kubernetes: stopping', {
        vnfInstanceId: ctx.vnfInstanceId,
        vduId,
        workload: describeRef(ref),
        replicas: entry.replicas,
        stopType: change.stopType,
      });
      if (ref.kind === 'Pod') {
        if (change.stopType === 'GRACEFUL') await client.delete(ref);
        else await deletePodNow(client, state.namespace, ref.name);
      } else {
        await client.mergePatch(ref, { spec: { replicas: 0 } });
        if (change.stopType !== 'GRACEFUL') for (const pod of pods) await deletePodNow(client, state.namespace, nameOf(pod));
      }
    } else {
      const current = await client.read(ref);
      const down = ref.kind === 'Pod' ? !current : current !== undefined && !((current.spec ?? {}) as { replicas?: number }).replicas;
      if (!remembered && !down) continue; // running already
      // Down but not remembered (a stop that was marked failed before its state was kept): as many
      // replicas as the instance records VNFCs of the VDU.
      const entry = remembered ?? {
        vduId,
        ref,
        ...(ref.kind === 'Pod' ? {} : { replicas: change.vnfcs.filter((vnfc) => vnfc.vduId === vduId).length || 1 }),
        pods: [],
      };
      if (!remembered) stopped.push(entry);
      log.info('kubernetes: starting', { vnfInstanceId: ctx.vnfInstanceId, vduId, workload: describeRef(ref), replicas: entry.replicas });
      if (ref.kind === 'Pod') {
        if (!current) await helpers.recreatePod(ctx, client, state, ref.name);
      } else if (!current) {
        throw new KubernetesError(`VDU ${vduId}: ${describeRef(ref)} no longer exists`, { vimStatus: 404 });
      } else if (!((current.spec ?? {}) as { replicas?: number }).replicas) {
        // A workload scaled up meanwhile (a SCALE of the stopped VNF) keeps the count it was given.
        await client.mergePatch(ref, { spec: { replicas: entry.replicas ?? 1 } });
      }
    }
  }
  const operation: Operation = {
    changeStateTo: change.changeStateTo,
    workloads: names,
    ...(change.changeStateTo === 'STOPPED' && change.stopType !== 'GRACEFUL' ? { forceful: true } : {}),
    ...(change.changeStateTo === 'STOPPED' && change.stopType === 'GRACEFUL'
      ? { deadline: new Date(Date.now() + (change.gracefulStopTimeout ?? 0) * 1000).toISOString() }
      : {}),
  };
  return { ...state, stopped, operate: operation };
}

export async function operatePoll(ctx: OperationContext, raw: DriverState, _change: OperateChange, helpers: OperateHelpers): Promise<Progress> {
  const state = stateOf(raw);
  const client = new KubeClient(ctx.vim);
  const label = labelOf(ctx);
  const operation = operationOf(state);
  if (!operation) return { status: 'FAILED', state: { ...state }, reason: 'the OPERATE has no record of what it started' };
  const stopped = stoppedWorkloads(state);
  const entries = stopped.filter((entry) => operation.workloads.includes(entry.ref.name));
  const { operate: _operate, ...rest } = state;
  if (operation.changeStateTo === 'STOPPED') {
    const hard = operation.forceful === true || (operation.deadline !== undefined && Date.now() > Date.parse(operation.deadline));
    let pending = false;
    for (const entry of entries) {
      const workload = await client.read(entry.ref);
      if (entry.ref.kind === 'Pod') {
        if (!workload) continue;
        pending = true;
        if (hard) await deletePodNow(client, state.namespace, entry.ref.name);
        continue;
      }
      if (!workload) return { status: 'FAILED', state: { ...state }, reason: `${describeRef(entry.ref)} no longer exists` };
      if (((workload.spec ?? {}) as { replicas?: number }).replicas !== 0) await client.mergePatch(entry.ref, { spec: { replicas: 0 } });
      const { pods } = await podsOf(client, workload, label);
      if (pods.length) pending = true;
      if (hard) for (const pod of pods) await deletePodNow(client, state.namespace, nameOf(pod));
    }
    return pending ? { status: 'IN_PROGRESS', state: { ...state } } : { status: 'DONE', state: { ...rest, stopped } };
  }
  for (const entry of entries) {
    if (entry.ref.kind === 'Pod' && !(await client.read(entry.ref))) {
      await helpers.recreatePod(ctx, client, state, entry.ref.name);
      return { status: 'IN_PROGRESS', state: { ...state } };
    }
  }
  const rollout = await rollouts(
    client,
    entries.map((entry) => entry.ref),
    label,
  );
  if (rollout.status === 'FAILED') return { status: 'FAILED', state: { ...state }, reason: rollout.reason };
  if (rollout.status === 'IN_PROGRESS') return { status: 'IN_PROGRESS', state: { ...state } };
  return { status: 'DONE', state: { ...rest, stopped: stopped.filter((entry) => !entries.includes(entry)) } };
}

/**
 * The VNFCs of the VDUs stopped on purpose, as they were when stopped (vnfcState STOPPED), for the
 * VDUs that have no pods now (`running`: the VDUs collect found pods of).
 */
export function stoppedVnfcs(ctx: OperationContext, raw: DriverState, running: ReadonlySet<string>): Info[] {
  const state = stateOf(raw);
  return stoppedWorkloads(raw)
    .filter((entry) => !running.has(entry.vduId))
    .flatMap((entry) =>
      entry.pods.map((pod) => ({
        id: pod.name,
        vduId: entry.vduId,
        computeResource: { vimConnectionId: ctx.vim.vimId, resourceId: pod.name, vimLevelResourceType: entry.ref.kind },
        metadata: {
          creation_time: pod.created ?? null,
          namespace: entry.ref.namespace ?? state.namespace ?? null,
          pod_uid: pod.uid ?? null,
          workload: `${entry.ref.kind}/${entry.ref.name}`,
          stopped: true,
        },
      })),
    );
}

/** A VNFC's state as collect reads it: stopped when the VNFM stopped its workload. */
export const vnfcStateOf = (vnfc: Info): 'STARTED' | 'STOPPED' => ((vnfc.metadata as Info | undefined)?.stopped === true ? 'STOPPED' : 'STARTED');
