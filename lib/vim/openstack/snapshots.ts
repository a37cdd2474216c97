// VNF snapshots on OpenStack (SOL003 5.4.21, 5.4.22). A VNFC's snapshot is a Nova createImage of its
// server (a Glance image, for a server booted from an image) and a forced Cinder snapshot of each of
// its volumes (a boot volume included). Reverting first brings each VDU back to the snapshot's VNFC
// count with the same Heat stack update a scale makes, then rebuilds every server from its VNFC's
// snapshot image (Nova rebuild with imageRef): a server the snapshot had gets its own image, a
// server made since gets the image of a snapshot VNFC of its VDU that is gone. Steps never wait.
import * as z from 'zod';
import { log } from '#lib/log.ts';
import type {
  DriverState,
  OperationContext,
  Progress,
  RevertTarget,
  SnapshotState,
  SnapshotTarget,
  UpdateChange,
  VimConnection,
  VnfcRef,
} from '#lib/vim/driver.ts';
import { VimError } from './errors.ts';
import { GlanceClient } from './glance.ts';
import { HeatClient } from './heat.ts';
import { flavourOf } from './hot.ts';
import { OpenStackSession } from './keystone.ts';
import { collectResources } from './resources.ts';
import { RESOURCE_NESTED_DEPTH, stackProgress, stackRef, stateOf, type OpenStackState } from './state.ts';

/** Nova 2.45: createImage answers the image id in its body. */
const NOVA_MICROVERSION = { 'OpenStack-API-Version': 'compute 2.45', 'X-OpenStack-Nova-API-Version': '2.45' };

/** One VNFC's snapshot as this driver records it: the Glance image and the Cinder snapshots. */
interface OpenStackVnfcSnapshot {
  vnfcResourceInfoId: string;
  vduId: string;
  resourceId: string;
  imageId?: string;
  volumes: Array<{ storageResourceId: string; volumeId: string; snapshotId: string }>;
  finishedAt?: string;
  computeSnapshotResource?: { vimConnectionId?: string; resourceId: string; vimLevelResourceType?: string };
  storageSnapshotResources: Array<{ storageResourceId: string; storageSnapshotResource?: Record<string, unknown> }>;
}

type OpenStackSnapshot = SnapshotState & { vnfcSnapshots: OpenStackVnfcSnapshot[] };

const serverSchema = z
  .object({
    server: z
      .object({
        id: z.string(),
        status: z.string(),
        image: z.union([z.string(), z.object({ id: z.string() }).passthrough()]).nullish(),
        'OS-EXT-STS:task_state': z.string().nullish(),
        fault: z.object({ message: z.string().optional() }).passthrough().nullish(),
      })
      .passthrough(),
  })
  .passthrough();
type Server = z.infer<typeof serverSchema>['server'];

const imageIdOf = (server: Server): string | undefined => (typeof server.image === 'object' && server.image ? server.image.id : undefined);

class NovaServers {
  constructor(private readonly session: OpenStackSession) {}

  async get(id: string): Promise<Server | undefined> {
    const response = await this.session.request('nova', 'compute', `/servers/${encodeURIComponent(id)}`, { what: `reading server ${id}`, accept: [200, 404] });
    if (response.status === 404) {
      await response.body?.cancel();
      return undefined;
    }
    return (await this.session.json('nova', response, serverSchema, `reading server ${id}`)).server;
  }

  /** createImage: the new image's id (from the body since 2.45, from Location before). */
  async createImage(id: string, name: string, metadata: Record<string, string>): Promise<string> {
    const response = await this.session.request('nova', 'compute', `/servers/${encodeURIComponent(id)}/action`, {
      method: 'POST',
      what: `snapshotting server ${id}`,
      headers: NOVA_MICROVERSION,
      json: { createImage: { name, metadata } },
      accept: [202],
    });
    const location = response.headers.get('location');
    const body = (await response.json().catch(() => undefined)) as { image_id?: unknown } | undefined;
    const imageId = typeof body?.image_id === 'string' ? body.image_id : location?.split('/').pop();
    if (!imageId) throw new VimError('nova', `snapshotting server ${id}: nova named no image`);
    return imageId;
  }

  async rebuild(id: string, imageId: string): Promise<void> {
    const response = await this.session.request('nova', 'compute', `/servers/${encodeURIComponent(id)}/action`, {
      method: 'POST',
      what: `rebuilding server ${id} from image ${imageId}`,
      json: { rebuild: { imageRef: imageId } },
      accept: [202],
    });
    await response.body?.cancel();
  }
}

const cinderSnapshot = z.object({ snapshot: z.object({ id: z.string(), status: z.string() }).passthrough() }).passthrough();

class CinderSnapshots {
  constructor(private readonly session: OpenStackSession) {}

  async create(volumeId: string, name: string, metadata: Record<string, string>): Promise<string> {
    const response = await this.session.request('cinder', 'block-storage', '/snapshots', {
      method: 'POST',
      what: `snapshotting volume ${volumeId}`,
      // An attached volume (a boot volume, a data volume in use) is snapshotted as Nova does it: forced.
      json: { snapshot: { volume_id: volumeId, name, metadata, force: true } },
      accept: [202, 200],
    });
    return (await this.session.json('cinder', response, cinderSnapshot, `snapshotting volume ${volumeId}`)).snapshot.id;
  }

  async status(id: string): Promise<string | undefined> {
    const response = await this.session.request('cinder', 'block-storage', `/snapshots/${encodeURIComponent(id)}`, {
      what: `reading volume snapshot ${id}`,
      accept: [200, 404],
    });
    if (response.status === 404) {
      await response.body?.cancel();
      return undefined;
    }
    return (await this.session.json('cinder', response, cinderSnapshot, `reading volume snapshot ${id}`)).snapshot.status;
  }

  async delete(id: string): Promise<void> {
    const response = await this.session.request('cinder', 'block-storage', `/snapshots/${encodeURIComponent(id)}`, {
      method: 'DELETE',
      what: `deleting volume snapshot ${id}`,
      accept: [202, 204, 404],
    });
    await response.body?.cancel();
  }
}

function snapshotOf(raw: DriverState): OpenStackSnapshot {
  const vnfcSnapshots = Array.isArray(raw.vnfcSnapshots) ? (raw.vnfcSnapshots as OpenStackVnfcSnapshot[]) : [];
  return { ...raw, vnfcSnapshots };
}

/** The SOL003 resource handles of a VNFC snapshot (computeSnapshotResource, storageSnapshotResources). */
function withHandles(vnfc: OpenStackVnfcSnapshot, vimConnectionId: string): OpenStackVnfcSnapshot {
  return {
    ...vnfc,
    ...(vnfc.imageId ? { computeSnapshotResource: { vimConnectionId, resourceId: vnfc.imageId, vimLevelResourceType: 'OS::Glance::Image' } } : {}),
    storageSnapshotResources: vnfc.volumes.map((volume) => ({
      storageResourceId: volume.storageResourceId,
      storageSnapshotResource: { vimConnectionId, resourceId: volume.snapshotId, vimLevelResourceType: 'OS::Cinder::VolumeSnapshot' },
    })),
  };
}

export async function snapshotStart(ctx: OperationContext, _state: DriverState, target: SnapshotTarget): Promise<SnapshotState> {
  const session = new OpenStackSession(ctx.vim);
  const nova = new NovaServers(session);
  const cinder = new CinderSnapshots(session);
  const metadata = { vnf_instance_id: ctx.vnfInstanceId, vnf_snapshot: target.name };
  const made: OpenStackVnfcSnapshot[] = [];
  try {
    for (const vnfc of target.vnfcs) {
      const server = await nova.get(vnfc.resourceId);
      if (!server) throw new VimError('nova', `VNFC ${vnfc.vnfcResourceInfoId}: server ${vnfc.resourceId} no longer exists`);
      const entry: OpenStackVnfcSnapshot = {
        vnfcResourceInfoId: vnfc.vnfcResourceInfoId,
        vduId: vnfc.vduId,
        resourceId: vnfc.resourceId,
        volumes: [],
        storageSnapshotResources: [],
      };
      made.push(entry);
      // A server booted from a volume has no image of its own: its boot volume's snapshot is its content.
      if (imageIdOf(server)) entry.imageId = await nova.createImage(server.id, `${target.name}-${vnfc.vnfcResourceInfoId}`, metadata);
      for (const storage of vnfc.storages) {
        const snapshotId = await cinder.create(storage.resourceId, `${target.name}-${storage.storageResourceId}`, metadata);
        entry.volumes.push({ storageResourceId: storage.storageResourceId, volumeId: storage.resourceId, snapshotId });
      }
    }
  } catch (error) {
    // A start that throws leaves no state to delete from: what it made goes now.
    await deleteSnapshot(ctx.vim, { vnfcSnapshots: made }).catch((cleanup: unknown) =>
      log.warn('openstack: could not delete the snapshots of a failed snapshot start', { vnfInstanceId: ctx.vnfInstanceId, error: cleanup }),
    );
    throw error;
  }
  log.info('openstack: snapshotting VNFCs', { vnfInstanceId: ctx.vnfInstanceId, snapshot: target.name, vnfcs: made.length });
  return { vnfcSnapshots: made.map((vnfc) => withHandles(vnfc, ctx.vim.vimId)) };
}

export async function snapshotPoll(ctx: OperationContext, raw: SnapshotState): Promise<Progress> {
  const state = snapshotOf(raw);
  const session = new OpenStackSession(ctx.vim);
  const glance = new GlanceClient(session);
  const cinder = new CinderSnapshots(session);
  const now = new Date().toISOString();
  const vnfcSnapshots: OpenStackVnfcSnapshot[] = [];
  for (const vnfc of state.vnfcSnapshots) {
    if (vnfc.finishedAt) {
      vnfcSnapshots.push(vnfc);
      continue;
    }
    let pending = false;
    if (vnfc.imageId) {
      const image = await glance.getImage(vnfc.imageId);
      if (!image || ['killed', 'deleted', 'pending_delete'].includes(image.status)) {
        return {
          status: 'FAILED',
          state: { ...state },
          reason: `the snapshot image ${vnfc.imageId} of server ${vnfc.resourceId} is ${image?.status ?? 'gone'}`,
        };
      }
      pending ||= image.status !== 'active';
    }
    for (const volume of vnfc.volumes) {
      const status = await cinder.status(volume.snapshotId);
      if (!status || status.startsWith('error')) {
        return { status: 'FAILED', state: { ...state }, reason: `the snapshot ${volume.snapshotId} of volume ${volume.volumeId} is ${status ?? 'gone'}` };
      }
      pending ||= status !== 'available';
    }
    vnfcSnapshots.push(pending ? vnfc : { ...vnfc, finishedAt: now });
  }
  const next = { ...state, vnfcSnapshots };
  return vnfcSnapshots.every((vnfc) => vnfc.finishedAt) ? { status: 'DONE', state: next } : { status: 'IN_PROGRESS', state: next };
}

/** Volume snapshot states Cinder is still working in. */
const SETTLING = new Set(['creating', 'backing-up', 'restoring', 'unmanaging']);

/** How long a deletion waits for a volume snapshot still being made (Cinder deletes only a settled one). */
export const VOLUME_SNAPSHOT_SETTLE_MS = 300_000;

/**
 * Cinder refuses to delete a volume snapshot that is still being made ("status must be available
 * or error"), as one is when a failed CREATE_SNAPSHOT is rolled back at once: wait until it has
 * settled, then delete it. One still not settled after VOLUME_SNAPSHOT_SETTLE_MS fails the step
 * with that reason, to be retried.
 */
async function deleteWhenSettled(cinder: CinderSnapshots, id: string, settleMs: number): Promise<void> {
  const deadline = Date.now() + settleMs;
  for (let polls = 0; ; polls += 1) {
    const status = await cinder.status(id);
    if (status === undefined || status === 'deleting' || status === 'deleted') return;
    if (!SETTLING.has(status)) break;
    if (Date.now() > deadline)
      throw new VimError('cinder', `volume snapshot ${id} is still ${status} after ${settleMs / 1000} s; try again once it has settled`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 200 * 2 ** Math.min(polls, 4))));
  }
  await cinder.delete(id);
}

export async function deleteSnapshot(vim: VimConnection, raw: SnapshotState, settleMs = VOLUME_SNAPSHOT_SETTLE_MS): Promise<void> {
  const state = snapshotOf(raw);
  const session = new OpenStackSession(vim);
  const glance = new GlanceClient(session);
  const cinder = new CinderSnapshots(session);
  for (const vnfc of state.vnfcSnapshots) {
    if (vnfc.imageId) await glance.deleteImage(vnfc.imageId);
    for (const volume of vnfc.volumes ?? []) await deleteWhenSettled(cinder, volume.snapshotId, settleMs);
  }
}

// ---------------------------------------------------------------------------------------------
// Revert

/** A server to rebuild from a snapshot image. */
export interface Rebuild {
  serverId: string;
  imageId: string;
}

/**
 * Which server gets which snapshot image: a server the snapshot had gets its own; the other servers
 * of a VDU get, in order, the images of that VDU's snapshot VNFCs no server has any more. VNFCs with
 * no image (booted from a volume) are named in `withoutImage`.
 */
export function rebuildPlan(
  snapshot: Array<Pick<OpenStackVnfcSnapshot, 'vduId' | 'resourceId' | 'imageId' | 'vnfcResourceInfoId'>>,
  servers: VnfcRef[],
  only?: RevertTarget['only'],
): { rebuilds: Rebuild[]; withoutImage: string[] } {
  const rebuilds: Rebuild[] = [];
  const withoutImage: string[] = [];
  const add = (serverId: string, vnfc: (typeof snapshot)[number]) => {
    if (vnfc.imageId) rebuilds.push({ serverId, imageId: vnfc.imageId });
    else withoutImage.push(serverId);
  };
  if (only) {
    const vnfc = snapshot.find((candidate) => candidate.vnfcResourceInfoId === only.vnfcResourceInfoId);
    if (vnfc) add(only.resourceId, vnfc);
    return { rebuilds, withoutImage };
  }
  const present = new Set(servers.map((server) => server.resourceId));
  for (const vduId of new Set(servers.map((server) => server.vduId))) {
    const ofVdu = snapshot.filter((vnfc) => vnfc.vduId === vduId);
    const spare = ofVdu.filter((vnfc) => !present.has(vnfc.resourceId));
    for (const server of servers.filter((candidate) => candidate.vduId === vduId)) {
      const own = ofVdu.find((vnfc) => vnfc.resourceId === server.resourceId);
      const vnfc = own ?? spare.shift();
      if (vnfc) add(server.resourceId, vnfc);
    }
  }
  return { rebuilds, withoutImage };
}

/**
 * The change that brings each VDU back to the snapshot's count: the VNFCs made since the snapshot go
 * first (newest first), then the newest others.
 */
export function countChange(counts: Record<string, number>, current: VnfcRef[], snapshotServers: ReadonlySet<string>): UpdateChange | undefined {
  const targets: Record<string, number> = {};
  const remove: VnfcRef[] = [];
  for (const vduId of new Set([...Object.keys(counts), ...current.map((vnfc) => vnfc.vduId)])) {
    const ofVdu = current.filter((vnfc) => vnfc.vduId === vduId);
    const target = counts[vduId] ?? 0;
    if (ofVdu.length === target) continue;
    targets[vduId] = target;
    if (ofVdu.length > target) {
      const newestFirst = [...ofVdu].reverse();
      const order = [
        ...newestFirst.filter((vnfc) => !snapshotServers.has(vnfc.resourceId)),
        ...newestFirst.filter((vnfc) => snapshotServers.has(vnfc.resourceId)),
      ];
      remove.push(...order.slice(0, ofVdu.length - target).map(({ vduId: vdu, resourceId }) => ({ vduId: vdu, resourceId })));
    }
  }
  if (Object.keys(targets).length === 0) return undefined;
  return { kind: 'SCALE', scaleType: remove.length ? 'SCALE_IN' : 'SCALE_OUT', aspectId: '', steps: 0, targets, remove };
}

interface RevertProgress {
  phase: 'scale' | 'rebuild';
  rebuilds?: Rebuild[];
}

type RevertState = OpenStackState & { revert?: RevertProgress };

async function startRebuilds(ctx: OperationContext, state: OpenStackState, target: RevertTarget): Promise<RevertState> {
  const session = new OpenStackSession(ctx.vim);
  let servers = target.current;
  if (!target.only) {
    const resources = await new HeatClient(session).listResources(stackRef(state), RESOURCE_NESTED_DEPTH);
    servers = collectResources({ resources, flavour: flavourOf(ctx.vnfd, ctx.flavourId), extVirtualLinks: [] }).vnfcResourceInfo.map((vnfc) => ({
      vduId: String(vnfc.vduId),
      resourceId: String((vnfc.computeResource as { resourceId: string }).resourceId),
    }));
  }
  const plan = rebuildPlan(snapshotOf(target.snapshot).vnfcSnapshots, servers, target.only);
  const nova = new NovaServers(session);
  for (const rebuild of plan.rebuilds) await nova.rebuild(rebuild.serverId, rebuild.imageId);
  const warnings = plan.withoutImage.length
    ? [
        `Servers ${plan.withoutImage.join(', ')} boot from a volume: their content was not reverted (their boot volumes' snapshots are kept in the VNF snapshot)`,
      ]
    : undefined;
  log.info('openstack: rebuilding servers from snapshot images', {
    vnfInstanceId: ctx.vnfInstanceId,
    rebuilds: plan.rebuilds,
    withoutImage: plan.withoutImage,
  });
  return { ...state, ...(warnings ? { warnings } : {}), revert: { phase: 'rebuild', rebuilds: plan.rebuilds } };
}

export async function revertStart(
  ctx: OperationContext,
  raw: DriverState,
  target: RevertTarget,
  scale: (ctx: OperationContext, state: DriverState, change: UpdateChange) => Promise<DriverState>,
): Promise<DriverState> {
  const state = stateOf(ctx, raw);
  const change = target.counts
    ? countChange(target.counts, target.current, new Set(snapshotOf(target.snapshot).vnfcSnapshots.map((vnfc) => vnfc.resourceId)))
    : undefined;
  if (change) {
    log.info('openstack: bringing the VNFC count back to the snapshot', {
      vnfInstanceId: ctx.vnfInstanceId,
      targets: change.kind === 'SCALE' ? change.targets : {},
    });
    return { ...(await scale(ctx, state, change)), revert: { phase: 'scale' } };
  }
  return { ...(await startRebuilds(ctx, state, target)) };
}

export async function revertPoll(ctx: OperationContext, raw: DriverState, target: RevertTarget): Promise<Progress> {
  const { revert, ...rest } = raw as RevertState;
  const state = stateOf(ctx, rest);
  if (revert?.phase === 'scale') {
    const session = new OpenStackSession(ctx.vim);
    const progress = stackProgress(await new HeatClient(session).getStack(stackRef(state)), 'UPDATE', state);
    if (progress.status === 'FAILED') return { ...progress, state: { ...progress.state, revert } };
    if (progress.status !== 'DONE') return { status: 'IN_PROGRESS', state: { ...state, revert } };
    return { status: 'IN_PROGRESS', state: { ...(await startRebuilds(ctx, state, target)) } };
  }
  const nova = new NovaServers(new OpenStackSession(ctx.vim));
  for (const rebuild of revert?.rebuilds ?? []) {
    const server = await nova.get(rebuild.serverId);
    if (!server) return { status: 'FAILED', state: { ...state, revert }, reason: `server ${rebuild.serverId} went away while it was rebuilt` };
    if (server.status === 'ERROR') {
      return {
        status: 'FAILED',
        state: { ...state, revert },
        reason: `rebuilding server ${server.id} from image ${rebuild.imageId} failed${server.fault?.message ? `: ${server.fault.message}` : ''}`,
      };
    }
    if (server.status !== 'ACTIVE' || server['OS-EXT-STS:task_state'] || imageIdOf(server) !== rebuild.imageId)
      return { status: 'IN_PROGRESS', state: { ...state, revert } };
  }
  return { status: 'DONE', state: { ...state } };
}
