// Cinder v3: volumes that go creating -> available (from an image: downloading first), attach to a
// server as in-use through Nova, and refuse deletion while attached or while they have snapshots,
// as Cinder does; snapshots (creating -> available) and volumes made from them; quotas (volumes,
// gigabytes, snapshots) and the devstack lvmdriver-1 volume type.
import { empty, json, Router, type SimReply, type SimRequest } from './http.ts';
import type { Token } from './keystone.ts';
import { ApiError, isoCinder, isRecord, uuid, type Cloud } from './state.ts';

export type VolumeStatus =
  | 'creating'
  | 'downloading'
  | 'available'
  | 'reserved'
  | 'attaching'
  | 'in-use'
  | 'detaching'
  | 'deleting'
  | 'error'
  | 'error_deleting';

export interface Attachment {
  id: string;
  serverId: string;
  device: string;
  hostName: string;
  attachedAt: number;
}

export interface Volume {
  id: string;
  name: string | null;
  description: string | null;
  projectId: string;
  userId: string;
  size: number;
  status: VolumeStatus;
  availabilityZone: string;
  imageId: string | null;
  sourceVolId: string | null;
  snapshotId: string | null;
  multiattach: boolean;
  metadata: Record<string, string>;
  attachments: Attachment[];
  createdAt: number;
  updatedAt: number;
}

export type SnapshotStatus = 'creating' | 'available' | 'deleting' | 'error' | 'error_deleting';

export interface Snapshot {
  id: string;
  name: string | null;
  description: string | null;
  volumeId: string;
  projectId: string;
  userId: string;
  /** The volume's size when the snapshot was taken (GB). */
  size: number;
  status: SnapshotStatus;
  metadata: Record<string, string>;
  createdAt: number;
  updatedAt: number | null;
}

const KEYS: Record<number, string> = {
  400: 'badRequest',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  409: 'conflictingRequest',
  413: 'overLimit',
  500: 'computeFault',
};

export function cinderError(err: ApiError): SimReply {
  return json(err.status, { [KEYS[err.status] ?? 'computeFault']: { code: err.status, message: err.message } });
}

/** Unscaled time an LVM snapshot takes to become available. */
const SNAPSHOT_MS = 500;

const VOLUME_TYPE = { id: '6a3f2a52-7f4e-4b2a-9d0c-000000000001', name: 'lvmdriver-1' };

export class Cinder {
  readonly volumes = new Map<string, Volume>();
  readonly snapshots = new Map<string, Snapshot>();
  readonly quota = { volumes: 10, gigabytes: 1000, snapshots: 10 };
  readonly router = new Router<Token>();

  constructor(private readonly cloud: Cloud) {
    this.#routes();
  }

  require(id: string): Volume {
    const volume = this.volumes.get(id);
    if (!volume) throw new ApiError(404, `Volume ${id} could not be found.`, 'VolumeNotFound');
    return volume;
  }

  #set(volume: Volume, status: VolumeStatus): void {
    volume.status = status;
    volume.updatedAt = Date.now();
    this.cloud.sched.changed();
  }

  /** Creates a volume; it becomes available (or error, when a fault says so) after a delay. */
  create(owner: { projectId: string; userId: string }, input: Record<string, unknown>): Volume {
    const projectId = owner.projectId;
    let snapshot: Snapshot | undefined;
    if (input.snapshot_id !== undefined && input.snapshot_id !== null) {
      snapshot = this.requireSnapshot(String(input.snapshot_id));
      if (snapshot.status !== 'available')
        throw new ApiError(400, 'Invalid snapshot: Originating snapshot status must be one of available values', 'InvalidSnapshot');
    }
    // Cinder takes the size of the snapshot (or source volume) when none is given.
    const source = typeof input.source_volid === 'string' ? this.volumes.get(input.source_volid) : undefined;
    const size = input.size === undefined || input.size === null ? (snapshot?.size ?? source?.size ?? Number.NaN) : Number(input.size);
    const imageRef = input.imageRef ?? input.image_id;
    let imageId: string | null = null;
    let minSize = 1;
    if (imageRef !== undefined && imageRef !== null) {
      const image = this.cloud.glance.get(String(imageRef));
      if (image?.status !== 'active') throw new ApiError(400, 'Invalid image identifier or unable to access requested image.', 'InvalidInput');
      imageId = image.id;
      minSize = Math.max(1, image.minDisk, Math.ceil((image.size ?? 0) / 2 ** 30));
    }
    let sourceVolId: string | null = null;
    if (typeof input.source_volid === 'string') sourceVolId = this.require(input.source_volid).id;
    if (!Number.isInteger(size) || size < 1)
      throw new ApiError(400, `Invalid input received: Volume size '${String(input.size)}' must be an integer and greater than 0.`, 'InvalidInput');
    if (size < minSize)
      throw new ApiError(400, `Invalid input received: Size of specified image ${minSize}GB is larger than volume size ${size}GB.`, 'InvalidInput');
    if (snapshot && size < snapshot.size)
      throw new ApiError(
        400,
        `Invalid input received: Volume size '${size}'GB cannot be smaller than the snapshot size ${snapshot.size}GB. They must be >= original snapshot size.`,
        'InvalidInput',
      );
    const mine = [...this.volumes.values()].filter((v) => v.projectId === projectId);
    if (this.quota.volumes >= 0 && mine.length + 1 > this.quota.volumes) {
      throw new ApiError(
        413,
        `VolumeLimitExceeded: Maximum number of volumes allowed (${this.quota.volumes}) exceeded for quota 'volumes'.`,
        'VolumeLimitExceeded',
      );
    }
    const used = this.#gigabytesUsed(projectId);
    if (this.quota.gigabytes >= 0 && used + size > this.quota.gigabytes) {
      throw new ApiError(
        413,
        `VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds allowed gigabytes quota. Requested ${size}G, quota is ${this.quota.gigabytes}G and ${used}G has been consumed.`,
        'VolumeSizeExceedsAvailableQuota',
      );
    }
    // A volume from a snapshot is as bootable as the volume the snapshot was taken of.
    if (snapshot && imageId === null) imageId = this.volumes.get(snapshot.volumeId)?.imageId ?? null;
    const az = typeof input.availability_zone === 'string' && input.availability_zone !== '' ? input.availability_zone : 'nova';
    if (az !== 'nova') throw new ApiError(400, `Invalid input received: Availability zone '${az}' is invalid.`, 'InvalidInput');
    const now = Date.now();
    const volume: Volume = {
      id: uuid(),
      name: typeof input.name === 'string' ? input.name : null,
      description: typeof input.description === 'string' ? input.description : null,
      projectId,
      userId: owner.userId,
      size,
      status: 'creating',
      availabilityZone: az,
      imageId,
      sourceVolId,
      snapshotId: snapshot?.id ?? null,
      multiattach: input.multiattach === true,
      metadata: isRecord(input.metadata) ? Object.fromEntries(Object.entries(input.metadata).map(([k, v]) => [k, String(v)])) : {},
      attachments: [],
      createdAt: now,
      updatedAt: now,
    };
    this.volumes.set(volume.id, volume);
    this.cloud.sched.changed();
    const fail = this.cloud.faults.take('volume-error') !== undefined;
    this.cloud.sched.spawn(async () => {
      await this.cloud.sched.sleep(500);
      if (imageId && this.volumes.get(volume.id) === volume && volume.status === 'creating') {
        this.#set(volume, 'downloading');
        await this.cloud.sched.sleep(500);
      }
      if (this.volumes.get(volume.id) !== volume || (volume.status !== 'creating' && volume.status !== 'downloading')) return;
      this.#set(volume, fail ? 'error' : 'available');
    });
    return volume;
  }

  /** Nova reserving a volume for a server being built. */
  reserve(volume: Volume, serverId: string): void {
    if (volume.status !== 'available' && !(volume.multiattach && volume.status === 'in-use')) {
      throw new ApiError(
        400,
        `Invalid volume: Volume ${volume.id} status must be available or downloading to reserve, but the current status is ${volume.status}.`,
        'InvalidVolume',
      );
    }
    if (volume.attachments.some((a) => a.serverId === serverId))
      throw new ApiError(400, `Invalid volume: volume ${volume.id} already attached`, 'InvalidVolume');
    this.#set(volume, volume.status === 'in-use' ? 'in-use' : 'reserved');
  }

  attach(volume: Volume, serverId: string, device: string, host: string): void {
    volume.attachments.push({ id: uuid(), serverId, device, hostName: host, attachedAt: Date.now() });
    this.#set(volume, 'in-use');
  }

  /** Undoes reserve/attach for one server. */
  detach(volume: Volume, serverId: string): void {
    volume.attachments = volume.attachments.filter((a) => a.serverId !== serverId);
    if (volume.attachments.length === 0 && ['in-use', 'reserved', 'attaching', 'detaching'].includes(volume.status)) this.#set(volume, 'available');
    else this.cloud.sched.changed();
  }

  /** Starts deleting; the volume disappears after a delay. `cascade` deletes its snapshots too. */
  delete(volume: Volume, force = false, cascade = false): void {
    const snapshots = [...this.snapshots.values()].filter((s) => s.volumeId === volume.id);
    if (
      (!force && !['available', 'error', 'error_restoring', 'error_extending', 'error_managing'].includes(volume.status)) ||
      (snapshots.length > 0 && !cascade)
    ) {
      throw new ApiError(
        400,
        'Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer.',
        'InvalidVolume',
      );
    }
    if (volume.status === 'deleting') return;
    if (cascade && snapshots.some((s) => s.status !== 'available' && s.status !== 'error')) {
      throw new ApiError(400, 'Invalid volume: Snapshot status must be available or error and no snapshots may be in use for cascade delete.', 'InvalidVolume');
    }
    this.#set(volume, 'deleting');
    for (const snapshot of snapshots) this.#setSnapshot(snapshot, 'deleting');
    this.cloud.sched.spawn(async () => {
      await this.cloud.sched.sleep(300);
      for (const snapshot of snapshots) this.snapshots.delete(snapshot.id);
      this.volumes.delete(volume.id);
      this.cloud.sched.changed();
    });
  }

  /** Cinder's gigabytes quota counts snapshots as well as volumes. */
  #gigabytesUsed(projectId: string): number {
    const volumes = [...this.volumes.values()].filter((v) => v.projectId === projectId).reduce((sum, v) => sum + v.size, 0);
    return volumes + [...this.snapshots.values()].filter((s) => s.projectId === projectId).reduce((sum, s) => sum + s.size, 0);
  }

  requireSnapshot(id: string): Snapshot {
    const snapshot = this.snapshots.get(id);
    if (!snapshot) throw new ApiError(404, `Snapshot ${id} could not be found.`, 'SnapshotNotFound');
    return snapshot;
  }

  #setSnapshot(snapshot: Snapshot, status: SnapshotStatus): void {
    snapshot.status = status;
    snapshot.updatedAt = Date.now();
    this.cloud.sched.changed();
  }

  /**
   * Snapshots a volume; it becomes available after a delay. An attached volume needs `force`
   * (Nova forces it when it snapshots a volume-backed server).
   */
  createSnapshot(owner: { projectId: string; userId: string }, input: Record<string, unknown>): Snapshot {
    if (typeof input.volume_id !== 'string')
      throw new ApiError(400, "Invalid input for field/attribute snapshot. Value: ... 'volume_id' is a required property", 'ValidationError');
    const volume = this.volumes.get(input.volume_id);
    if (!volume) throw new ApiError(404, `Volume ${input.volume_id} could not be found.`, 'VolumeNotFound');
    const force = input.force === true || input.force === 'true' || input.force === 'True';
    if (force ? !['available', 'in-use'].includes(volume.status) : volume.status !== 'available') {
      throw new ApiError(
        400,
        `Invalid volume: Volume ${volume.id} status must be ${force ? 'available or in-use' : 'available'}, but current status is: ${volume.status}.`,
        'InvalidVolume',
      );
    }
    const mine = [...this.snapshots.values()].filter((s) => s.projectId === owner.projectId);
    if (this.quota.snapshots >= 0 && mine.length + 1 > this.quota.snapshots) {
      throw new ApiError(
        413,
        `SnapshotLimitExceeded: Maximum number of snapshots allowed (${this.quota.snapshots}) exceeded for quota 'snapshots'.`,
        'SnapshotLimitExceeded',
      );
    }
    const used = this.#gigabytesUsed(owner.projectId);
    if (this.quota.gigabytes >= 0 && used + volume.size > this.quota.gigabytes) {
      throw new ApiError(
        413,
        `VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds allowed gigabytes quota. Requested ${volume.size}G, quota is ${this.quota.gigabytes}G and ${used}G has been consumed.`,
        'VolumeSizeExceedsAvailableQuota',
      );
    }
    const snapshot: Snapshot = {
      id: uuid(),
      name: typeof input.name === 'string' ? input.name : null,
      description: typeof input.description === 'string' ? input.description : null,
      volumeId: volume.id,
      projectId: owner.projectId,
      userId: owner.userId,
      size: volume.size,
      status: 'creating',
      metadata: isRecord(input.metadata) ? Object.fromEntries(Object.entries(input.metadata).map(([k, v]) => [k, String(v)])) : {},
      createdAt: Date.now(),
      updatedAt: null,
    };
    this.snapshots.set(snapshot.id, snapshot);
    this.cloud.sched.changed();
    this.cloud.sched.spawn(async () => {
      await this.cloud.sched.sleep(SNAPSHOT_MS);
      if (this.snapshots.get(snapshot.id) === snapshot && snapshot.status === 'creating') this.#setSnapshot(snapshot, 'available');
    });
    return snapshot;
  }

  /** Starts deleting a snapshot; it disappears after a delay. */
  deleteSnapshot(snapshot: Snapshot): void {
    if (snapshot.status !== 'available' && snapshot.status !== 'error') {
      throw new ApiError(400, 'Invalid snapshot: Volume Snapshot status must be available or error and must not be part of a group.', 'InvalidSnapshot');
    }
    this.#setSnapshot(snapshot, 'deleting');
    this.cloud.sched.spawn(async () => {
      await this.cloud.sched.sleep(300);
      this.snapshots.delete(snapshot.id);
      this.cloud.sched.changed();
    });
  }

  snapshotBody(s: Snapshot, detail: boolean): Record<string, unknown> {
    return {
      id: s.id,
      name: s.name,
      description: s.description,
      volume_id: s.volumeId,
      status: s.status,
      size: s.size,
      metadata: { ...s.metadata },
      created_at: isoCinder(s.createdAt),
      updated_at: s.updatedAt === null ? null : isoCinder(s.updatedAt),
      ...(detail
        ? { 'os-extended-snapshot-attributes:progress': s.status === 'creating' ? '0%' : '100%', 'os-extended-snapshot-attributes:project_id': s.projectId }
        : {}),
    };
  }

  body(v: Volume, origin: string): Record<string, unknown> {
    const image = v.imageId ? this.cloud.glance.get(v.imageId) : undefined;
    return {
      id: v.id,
      name: v.name,
      description: v.description,
      status: v.status,
      size: v.size,
      availability_zone: v.availabilityZone,
      bootable: v.imageId ? 'true' : 'false',
      encrypted: false,
      multiattach: v.multiattach,
      metadata: { ...v.metadata },
      attachments: v.attachments.map((a) => ({
        id: v.id,
        attachment_id: a.id,
        volume_id: v.id,
        server_id: a.serverId,
        host_name: a.hostName,
        device: a.device,
        attached_at: isoCinder(a.attachedAt),
      })),
      volume_type: VOLUME_TYPE.name,
      volume_type_id: VOLUME_TYPE.id,
      snapshot_id: v.snapshotId,
      source_volid: v.sourceVolId,
      consistencygroup_id: null,
      group_id: null,
      replication_status: null,
      migration_status: null,
      user_id: v.userId,
      'os-vol-tenant-attr:tenant_id': v.projectId,
      'os-vol-host-attr:host': 'sim-volume@lvmdriver-1#lvmdriver-1',
      'os-vol-mig-status-attr:migstat': null,
      'os-vol-mig-status-attr:name_id': null,
      shared_targets: true,
      service_uuid: '3f7b8a2e-0000-4000-8000-000000000001',
      cluster_name: null,
      provider_id: null,
      consumes_quota: true,
      created_at: isoCinder(v.createdAt),
      updated_at: isoCinder(v.updatedAt),
      ...(image
        ? {
            volume_image_metadata: {
              image_id: image.id,
              image_name: image.name ?? '',
              checksum: image.checksum ?? '',
              container_format: image.containerFormat ?? '',
              disk_format: image.diskFormat ?? '',
              size: String(image.size ?? 0),
              min_disk: String(image.minDisk),
              min_ram: String(image.minRam),
            },
          }
        : {}),
      links: [
        { rel: 'self', href: `${origin}/volume/v3/${v.projectId}/volumes/${v.id}` },
        { rel: 'bookmark', href: `${origin}/volume/volumes/${v.id}` },
      ],
    };
  }

  #visible(token: Token, v: Volume): boolean {
    return this.cloud.keystone.isAdmin(token) || v.projectId === token.project?.id;
  }

  #routes(): void {
    const r = this.router;
    const version = (req: SimRequest) => ({
      id: 'v3.0',
      status: 'CURRENT',
      version: '3.70',
      min_version: '3.0',
      updated: '2023-08-31T00:00:00Z',
      links: [{ rel: 'self', href: `${req.origin}/volume/v3/` }],
      'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.volume+json;version=3' }],
    });
    r.on('GET', '/', (req) => json(300, { versions: [version(req)] }));
    const list = (req: SimRequest, token: Token, detail: boolean): SimReply => {
      let items = [...this.volumes.values()].filter((v) => this.#visible(token, v));
      if (req.query.get('all_tenants') === null && !this.cloud.keystone.isAdmin(token)) items = items.filter((v) => v.projectId === token.project?.id);
      const name = req.query.get('name');
      if (name !== null) items = items.filter((v) => v.name === name);
      const status = req.query.get('status');
      if (status !== null) items = items.filter((v) => v.status === status);
      return json(200, {
        volumes: items.map((v) => (detail ? this.body(v, req.origin) : { id: v.id, name: v.name, links: this.body(v, req.origin).links as unknown[] })),
      });
    };
    r.on('GET', '/volumes', (req, _p, t) => list(req, t, false));
    r.on('GET', '/volumes/detail', (req, _p, t) => list(req, t, true));
    r.on('POST', '/volumes', async (req, _p, t) => {
      const b = await req.json();
      if (!isRecord(b) || !isRecord(b.volume)) throw new ApiError(400, "Missing required element 'volume' in request body.", 'badRequest');
      return json(202, { volume: this.body(this.create({ projectId: t.project?.id ?? '', userId: t.user.id }, b.volume), req.origin) });
    });
    r.on('GET', '/volumes/:id', (req, { id = '' }, t) => {
      const v = this.require(id);
      if (!this.#visible(t, v)) throw new ApiError(404, `Volume ${id} could not be found.`);
      return json(200, { volume: this.body(v, req.origin) });
    });
    r.on('DELETE', '/volumes/:id', (req, { id = '' }, t) => {
      const v = this.require(id);
      if (!this.#visible(t, v)) throw new ApiError(404, `Volume ${id} could not be found.`);
      this.delete(v, false, req.query.get('cascade')?.toLowerCase() === 'true');
      return empty(202);
    });
    const snapshot = (t: Token, id: string): Snapshot => {
      const s = this.requireSnapshot(id);
      if (!this.cloud.keystone.isAdmin(t) && s.projectId !== t.project?.id) throw new ApiError(404, `Snapshot ${id} could not be found.`, 'SnapshotNotFound');
      return s;
    };
    const snapshots = (req: SimRequest, t: Token, detail: boolean): SimReply => {
      const everyone = this.cloud.keystone.isAdmin(t) && req.query.get('all_tenants') !== null;
      let items = [...this.snapshots.values()].filter((s) => everyone || s.projectId === t.project?.id);
      for (const [key, get] of [
        ['name', (s: Snapshot) => s.name],
        ['status', (s: Snapshot) => s.status],
        ['volume_id', (s: Snapshot) => s.volumeId],
      ] as const) {
        const want = req.query.get(key);
        if (want !== null) items = items.filter((s) => get(s) === want);
      }
      items.sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
      return json(200, { snapshots: items.map((s) => this.snapshotBody(s, detail)) });
    };
    r.on('GET', '/snapshots', (req, _p, t) => snapshots(req, t, false));
    r.on('GET', '/snapshots/detail', (req, _p, t) => snapshots(req, t, true));
    r.on('POST', '/snapshots', async (req, _p, t) => {
      const b = await req.json();
      if (!isRecord(b) || !isRecord(b.snapshot)) throw new ApiError(400, "Missing required element 'snapshot' in request body.", 'badRequest');
      const input = b.snapshot;
      const volume = typeof input.volume_id === 'string' ? this.volumes.get(input.volume_id) : undefined;
      if (volume && !this.#visible(t, volume)) throw new ApiError(404, `Volume ${volume.id} could not be found.`, 'VolumeNotFound');
      return json(202, { snapshot: this.snapshotBody(this.createSnapshot({ projectId: t.project?.id ?? '', userId: t.user.id }, input), false) });
    });
    r.on('GET', '/snapshots/:id', (_req, { id = '' }, t) => json(200, { snapshot: this.snapshotBody(snapshot(t, id), true) }));
    r.on('DELETE', '/snapshots/:id', (_req, { id = '' }, t) => {
      this.deleteSnapshot(snapshot(t, id));
      return empty(202);
    });
    r.on('GET', '/types', (req) =>
      json(200, {
        volume_types: [
          {
            ...VOLUME_TYPE,
            description: 'Default Volume Type',
            is_public: true,
            extra_specs: { volume_backend_name: 'lvmdriver-1' },
            qos_specs_id: null,
            'os-volume-type-access:is_public': true,
            links: [{ rel: 'self', href: `${req.origin}/volume/v3/types/${VOLUME_TYPE.id}` }],
          },
        ],
      }),
    );
    r.on('GET', '/os-quota-sets/:project', (_req, { project = '' }) => {
      const mine = [...this.volumes.values()].filter((v) => v.projectId === project);
      return json(200, {
        quota_set: {
          id: project,
          volumes: this.quota.volumes,
          gigabytes: this.quota.gigabytes,
          snapshots: this.quota.snapshots,
          backups: 10,
          backup_gigabytes: 1000,
          per_volume_gigabytes: -1,
          groups: 10,
          in_use: {
            volumes: mine.length,
            gigabytes: this.#gigabytesUsed(project),
            snapshots: [...this.snapshots.values()].filter((s) => s.projectId === project).length,
          },
        },
      });
    });
  }
}
