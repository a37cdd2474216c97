// The one interface every VIM driver implements (OpenStack, Kubernetes), chosen by vimType from
// the registry (registry.ts), so the LCM engine, its state machines, the VIM connection API and
// fault management never branch on the kind of VIM: a driver also describes its kind (credentials,
// Tacker's spelling of them, alarm wording). A driver step never waits: it starts work and returns,
// and the state machine polls with Wait states. Everything a driver returns travels through Step
// Functions, so it must hold no credentials.
import type { ZodType } from 'zod';
import type { PackageFileReader } from '#lib/packages/access.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';

/** A resolved VIM: where it is and how to authenticate (credentials only ever in memory). */
export interface VimConnection {
  vimId: string;
  vimType: string;
  interfaceInfo: Record<string, unknown>;
  accessInfo: Record<string, unknown>;
  extra?: Record<string, unknown>;
}

/** Reads files of the onboarded package (Heat templates, manifests, images) by their path in the CSAR. */
export type PackageFiles = PackageFileReader;

/** What the grant (local or from the NFVO) decided for this operation. */
export interface GrantDecision {
  /** VIM assets the NFVO already provides: VNFD software image id -> VIM image id, VDU -> flavour id. */
  images?: Record<string, string>;
  flavours?: Record<string, string>;
  zones?: Array<{ id: string; zoneId: string }>;
  /**
   * VDU id -> the VIM zone (a `zones[].zoneId`) the Grant places the VDU's new VNFCs in: each of its
   * `addResources` names the GrantRequest's resource definition (whose resourceTemplateId is the VDU)
   * and a `zones[].id`. Absent for a VDU the Grant does not place.
   */
  vduZones?: Record<string, string>;
}

export interface OperationContext {
  vnfInstanceId: string;
  opOccId: string;
  vnfd: ParsedVnfd;
  flavourId: string;
  instantiationLevelId?: string;
  /** The LCM request as the NFVO sent it (InstantiateVnfRequest, TerminateVnfRequest, ...), minus credentials. */
  request: Record<string, unknown>;
  /** The InstantiateVnfRequest the VNF was created with (the same as `request` during INSTANTIATE), minus credentials. */
  instantiateRequest: Record<string, unknown>;
  files: PackageFiles;
  vim: VimConnection;
  grant: GrantDecision;
}

/**
 * Opaque, JSON-serialisable driver state carried between steps (ids of what was created). The one
 * attribute the engine reads: `warnings`, messages for the op occ's `warnings` (SOL003 5.5.2.13),
 * e.g. VDUs an instantiate skipped.
 */
export type DriverState = Record<string, unknown> & { warnings?: string[] };

export type Progress =
  | { status: 'IN_PROGRESS'; state: DriverState }
  | { status: 'DONE'; state: DriverState }
  | { status: 'FAILED'; state: DriverState; reason: string }
  /**
   * CHANGE_VNFPKG only: the driver has reached a point where the package's CoordinateVNF script must
   * run for these VNFCs (seed 004). The engine runs it, then polls again with `state` (so the driver
   * records in `state` that it asked, and moves on at the next poll).
   */
  | { status: 'COORDINATE'; state: DriverState; coordinate: Coordination };

/** A CoordinateVNF call a driver asks for: the new or the old VNF's script, for these VNFCs. */
export interface Coordination {
  target: 'new' | 'old';
  vnfcs: Array<
    VnfcRef & {
      /** vnfcResourceInfo id when the VNFC is already recorded. */
      id?: string;
      /** IP addresses per connection point (CPD id), for the script's cp_name. */
      addresses?: Record<string, string[]>;
    }
  >;
  /** Anything else the script needs from the VIM (no credentials), e.g. the Service switched. */
  details?: Record<string, unknown>;
}

/**
 * CHANGE_VNFPKG (SOL003 5.4.11a, seed 004): the package the VNF moves to, and how. The driver's
 * `ctx.vnfd`/`ctx.files` stay the current package's; these are the new package's.
 */
export interface PackageChange {
  upgradeType: 'RollingUpdate' | 'BlueGreen';
  vnfPkgId: string;
  vnfd: ParsedVnfd;
  files: PackageFiles;
  /** The new package's deployment flavour (the instance's flavour id). */
  flavourId: string;
  /** VDUs to update (additionalParams.vdu_params[].vdu_id); every VDU of the flavour when empty. */
  vduIds: string[];
  /** Kubernetes: the new package's manifests (additionalParams.lcm-kubernetes-def-files), else the instance's paths. */
  defFiles?: string[];
  /** The grant's VIM assets for the new package (images, flavours). */
  grant: GrantDecision;
}

/** SOL003 InstantiatedVnfInfo parts a driver can tell from the VIM. */
export interface CollectedResources {
  vnfcResourceInfo: Array<Record<string, unknown>>;
  vnfVirtualLinkResourceInfo: Array<Record<string, unknown>>;
  virtualStorageResourceInfo: Array<Record<string, unknown>>;
  extCpInfo: Array<Record<string, unknown>>;
  extVirtualLinkInfo?: Array<Record<string, unknown>>;
  vnfcInfo?: Array<Record<string, unknown>>;
}

/** A VNFC as the engine names it to a driver: its VDU and the VIM resource (server id, pod name). */
export interface VnfcRef {
  vduId: string;
  resourceId: string;
}

/**
 * A change to an instantiated VNF's resources, worked out by the engine from the VNFD and the request.
 * SCALE: the VDUs the aspect changes and how many VNFCs each must have afterwards; on scale-in, the
 * VNFCs to remove (newest first), so drivers remove exactly those. HEAL: the VNFCs to replace by
 * fresh ones (every VNFC when the request names none); the other VNFCs must keep their ids.
 */
export type UpdateChange =
  | { kind: 'SCALE'; scaleType: 'SCALE_OUT' | 'SCALE_IN'; aspectId: string; steps: number; targets: Record<string, number>; remove: VnfcRef[] }
  | { kind: 'HEAL'; vnfcs: VnfcRef[] }
  /**
   * SCALE_TO_LEVEL: every aspect's scale level afterwards (`levels`), the VNFC count of each VDU
   * whose count changes (`targets`) and the VNFCs to remove (newest first) from those that shrink;
   * some VDUs may grow and others shrink in the one update. lib/vim/scaling.ts reads both scale kinds.
   */
  | { kind: 'SCALE_TO_LEVEL'; levels: Record<string, number>; targets: Record<string, number>; remove: VnfcRef[] }
  | OperateChange
  | FlavourChange;

/**
 * CHANGE_EXT_CONN (SOL003 5.4.11): the external VLs the VNF is to have afterwards, every one of them
 * (those the request did not name as they were), as InstantiateVnfRequest.extVirtualLinks would
 * give them; and the CPDs whose connectivity changes. A rollback is the same change back to the
 * external VLs the instance had.
 */
export interface ExtConnChange {
  extVirtualLinks: Array<Record<string, unknown>>;
  cpdIds: string[];
}

/**
 * What a driver can do about the external connectivity of a VNF: move its external CPs to other
 * external VLs, subnets and addresses (polled until DONE; the DONE state is the VNF's state from
 * then on, and `collect` with the new extVirtualLinks in ctx.instantiateRequest reads it), or, for
 * a kind of VIM whose VNFs are not attached to VIM networks, why not (the request is refused with it).
 */
export type ExternalConnectivity =
  | {
      start(ctx: OperationContext, state: DriverState, change: ExtConnChange): Promise<DriverState>;
      poll(ctx: OperationContext, state: DriverState, change: ExtConnChange): Promise<Progress>;
    }
  | { unsupported: string };

/**
 * OPERATE (SOL003 5.4.10): bring these VNFCs to `changeStateTo`; a VNFC already there is left alone.
 * A stop without stopType is FORCEFUL; gracefulStopTimeout (seconds) comes with GRACEFUL only. The
 * driver remembers in its state what it stopped on purpose (health() must not call that a fault),
 * and what a start needs to bring it back.
 */
export type OperateChange = {
  kind: 'OPERATE';
  changeStateTo: 'STARTED' | 'STOPPED';
  stopType?: 'FORCEFUL' | 'GRACEFUL';
  gracefulStopTimeout?: number;
  vnfcs: VnfcRef[];
};

/**
 * CHANGE_FLAVOUR (SOL003 5.4.7): the VNF is rebuilt in place as `ctx.flavourId` defines it (the
 * flavour's BaseHOT or manifests), at `ctx.instantiationLevelId`, from the driver state its last
 * operation left; what the old flavour has and the new one lacks goes. The driver keeps in its
 * state, per operation (`ctx.opOccId`), what the VNF was before, so a retry starts from the same
 * place and a rollback (`rollback`: back to the flavour the instance records, at `capacities`
 * VNFCs per VDU) restores it, removing what the failed attempt added.
 */
export type FlavourChange = {
  kind: 'CHANGE_FLAVOUR';
  rollback?: boolean;
  /** Kubernetes: the manifests of the flavour moved to; else those the VNF runs. */
  defFiles?: string[];
  /** VNFCs per VDU (a rollback's: the counts the instance had); else the instantiation level's. */
  capacities?: Record<string, number>;
  /** A rollback: the VIM resources of the VNFCs the instance had, kept where the VIM lets the driver choose. */
  keep?: string[];
};

/**
 * CREATE_SNAPSHOT (SOL003 5.4.21): the VNFCs to snapshot, as the instance records them, with the
 * storage (Cinder volumes, ...) each has. `name` prefixes what the snapshot creates on the VIM.
 */
export interface SnapshotTarget {
  name: string;
  vnfcs: Array<VnfcRef & { vnfcResourceInfoId: string; storages: Array<{ storageResourceId: string; resourceId: string }> }>;
}

/** One VNFC's snapshot on the VIM (SOL003 VnfcSnapshotInfo's resources); `finishedAt` once it is complete. */
export interface VnfcSnapshotResult {
  vnfcResourceInfoId: string;
  vduId: string;
  resourceId: string;
  computeSnapshotResource?: { vimConnectionId?: string; resourceId: string; vimLevelResourceType?: string };
  storageSnapshotResources: Array<{ storageResourceId: string; storageSnapshotResource?: Record<string, unknown> }>;
  finishedAt?: string;
}

/**
 * A driver's record of a VNF snapshot: what it made on the VIM, per VNFC (no credentials).
 * `wholeVnfOnly`: its VNFCs cannot be reverted one by one (a revert naming one VNFC is refused).
 */
export type SnapshotState = DriverState & { vnfcSnapshots: VnfcSnapshotResult[]; wholeVnfOnly?: boolean };

/**
 * REVERT_TO_SNAPSHOT (SOL003 5.4.22): the snapshot to go back to; the VNF gets the snapshot's VNFC
 * count per VDU (`counts`; undefined when one VNFC is reverted) and each VNFC the content of its
 * snapshot. `only`: revert just this VNFC (its VIM resource) to that VNFC snapshot.
 */
export interface RevertTarget {
  snapshot: SnapshotState;
  counts?: Record<string, number>;
  /** The instance's VNFCs now, oldest first (the newest go when the count comes down). */
  current: VnfcRef[];
  only?: { resourceId: string; vnfcResourceInfoId: string };
}

/** One instance's VNFCs whose health a driver checks: the instance's driver state names where they live. */
export interface HealthTarget {
  vnfInstanceId: string;
  state: DriverState;
  vnfcs: VnfcRef[];
}

/** A VNFC's health as the VIM reports it; `reason` says what is wrong (or what the VIM says when healthy). */
export interface VnfcHealth {
  vnfInstanceId: string;
  vduId: string;
  resourceId: string;
  healthy: boolean;
  reason: string;
  /** What kind of fault: the VIM resource is gone, or it is there and failed. */
  fault?: 'MISSING' | 'FAILED';
  /** The VIM's own status of the resource (Nova status, pod phase/reason). */
  vimStatus?: string;
}

export interface HealthReport {
  results: VnfcHealth[];
  /** VIM API calls the check made (the cost of a sweep). */
  apiCalls: number;
}

/** One VNF instance's VNFCs whose performance a driver reads: the instance's driver state names where they live. */
export interface MeasureTarget {
  vnfInstanceId: string;
  state: DriverState;
  vnfcs: Array<
    VnfcRef & {
      /** vnfcResourceInfo id (the PM subObjectInstanceId for VNFC metrics). */
      vnfcResourceInfoId: string;
      /** The VNFC's connection points (vnfcResourceInfo.vnfcCpInfo): id, CPD id, and whether it is a VNF external CP (vnfExtCpId set). */
      cps: Array<{
        cpInstanceId: string;
        cpdId: string;
        external: boolean;
        vnfExtCpId?: string;
        vnfLinkPortId?: string;
        /** The VIM's resource of the CP's port (a Neutron port id), when the instance records it (vnfLinkPorts, extLinkPorts). */
        portResourceId?: string;
      }>;
    }
  >;
}

/** Cumulative traffic counters of one CP since its VNFC started (the collector takes deltas between reads). */
export interface CpCounters {
  cpInstanceId: string;
  cpdId: string;
  external: boolean;
  vnfExtCpId?: string;
  bytesIn?: number;
  bytesOut?: number;
  packetsIn?: number;
  packetsOut?: number;
}

/** One VNFC's figures at one read. Gauges are percentages 0..100 at the time of the read; absent when the VIM does not tell. */
export interface VnfcMeasurement {
  vnfInstanceId: string;
  vnfcResourceInfoId: string;
  vduId: string;
  resourceId: string;
  /** ISO 8601 time of the read. */
  at: string;
  cpuUsagePercent?: number;
  memoryUsagePercent?: number;
  diskUsagePercent?: number;
  cps: CpCounters[];
}

export interface MeasureReport {
  results: VnfcMeasurement[];
  /** VNFCs that could not be read (gone, stopped, the VIM refused), with why; never a whole-report failure for one VNFC. */
  unavailable: Array<{ vnfInstanceId: string; vnfcResourceInfoId: string; reason: string }>;
  /** VIM API calls the read made (the cost of one collection). */
  apiCalls: number;
}

// ---------------------------------------------------------------------------------------------
// What a driver says about its kind of VIM

/** How an alarm for a faulty VNFC reads (SOL003 7.5.2.4 Alarm; X.733 event types). */
export interface FaultWording {
  severity: 'CRITICAL' | 'MAJOR' | 'MINOR' | 'WARNING';
  eventType: 'COMMUNICATIONS_ALARM' | 'PROCESSING_ERROR_ALARM' | 'ENVIRONMENTAL_ALARM' | 'QOS_ALARM' | 'EQUIPMENT_ALARM';
  probableCause: string;
  faultType: string;
}

/** The credentials a VIM connection of this kind needs, and how Tacker's legacy NFVO API spells them. */
export interface VimCredentials {
  /** What a registration's accessInfo must hold; refusals name fields, never values. */
  accessInfo: ZodType;
  /** Tacker's auth_cred and vim_project (`openstack vim register`) -> SOL003 accessInfo, and additions to interfaceInfo. */
  fromTacker(
    authCred: Record<string, unknown>,
    project: Record<string, unknown>,
    extra: Record<string, unknown> | undefined,
  ): { accessInfo: Record<string, unknown>; interfaceExtra: Record<string, unknown> };
  /** A record as Tacker shows it: auth_cred with every secret replaced by `mask`, and vim_project. */
  toTacker(
    vim: { maskedAccessInfo: Record<string, unknown>; interfaceInfo: Record<string, unknown>; vimProject?: Record<string, unknown> },
    mask: string,
  ): { authCred: Record<string, unknown>; vimProject: Record<string, unknown> };
}

/** Tacker's loosely typed fields: a non-empty string, or nothing. */
export const tackerString = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 ? value : undefined);
/** Tacker's loosely typed fields: true, 'true' or 'True' (and false likewise), or nothing. */
export const tackerBoolean = (value: unknown): boolean | undefined =>
  value === undefined ? undefined : value === true || String(value).toLowerCase() === 'true';

export interface InfraDriver {
  readonly credentials: VimCredentials;
  /** How a VNFC fault this driver's health() reported reads as an alarm. */
  faultWording(health: VnfcHealth): FaultWording;
  /**
   * Health of the VNFCs of instances on one VIM, with as few VIM calls as the VIM allows: one list
   * per VIM (OpenStack) or per namespace (Kubernetes), never one call per VNFC. A VNFC the VIM does
   * not list is unhealthy (fault MISSING).
   */
  health(vim: VimConnection, targets: HealthTarget[]): Promise<HealthReport>;
  /**
   * Performance figures of the VNFCs of instances on one VIM (SOL003 7.4 / ETSI GS NFV-IFA 027 metrics: vCPU, memory and
   * disk usage, CP traffic), with as few VIM calls as the VIM allows.
   */
  measure(vim: VimConnection, targets: MeasureTarget[]): Promise<MeasureReport>;
  /**
   * Starts creating the VNF's resources (images, stack, ...). Nothing that runs (servers, pods) is
   * created before `ready` resolves (the instantiate_start hook, which runs meanwhile); what is
   * inert until then (software images stored in the VIM) may be prepared while it runs. A `ready`
   * that rejects is thrown, after removing what was prepared.
   */
  instantiateStart(ctx: OperationContext, ready?: Promise<void>): Promise<DriverState>;
  instantiatePoll(ctx: OperationContext, state: DriverState): Promise<Progress>;
  /** Reads what was created, for instantiatedVnfInfo. */
  collect(ctx: OperationContext, state: DriverState): Promise<CollectedResources>;
  /** Starts removing everything the VNF (or a failed instantiate, on rollback) has on the VIM. */
  terminateStart(ctx: OperationContext, state: DriverState): Promise<DriverState>;
  terminatePoll(ctx: OperationContext, state: DriverState): Promise<Progress>;
  /** Starts a SCALE or HEAL of an instantiated VNF, from the driver state its last operation left. */
  updateStart(ctx: OperationContext, state: DriverState, change: UpdateChange): Promise<DriverState>;
  /** Until DONE; the state it returns then is the VNF's driver state from now on (for collect, terminate). */
  updatePoll(ctx: OperationContext, state: DriverState, change: UpdateChange): Promise<Progress>;
  /**
   * CHANGE_VNFPKG: starts moving the VNF to the new package (rolling update or blue-green), from the
   * driver state its last operation left; polled with changePoll until DONE (or COORDINATE, see
   * Progress). The DONE state is the VNF's state from then on, and `collect` with the new package's
   * VNFD (ctx.vnfd replaced) reads it.
   */
  changeStart(ctx: OperationContext, state: DriverState, change: PackageChange): Promise<DriverState>;
  changePoll(ctx: OperationContext, state: DriverState, change: PackageChange): Promise<Progress>;
  /**
   * Rollback of a failed CHANGE_VNFPKG, from the state the failed attempt left: blue-green deletes
   * what it created and keeps the old; rolling re-applies the old package VNFC by VNFC (asking for
   * the old VNF's coordination, which the engine runs with is_rollback). DONE = back on the old package.
   */
  changeRollbackStart(ctx: OperationContext, state: DriverState, change: PackageChange): Promise<DriverState>;
  changeRollbackPoll(ctx: OperationContext, state: DriverState, change: PackageChange): Promise<Progress>;
  /** CHANGE_EXT_CONN; a driver without it refuses the operation as unsupported. */
  readonly externalConnectivity?: ExternalConnectivity;
  /**
   * OPERATE: why this VIM cannot start or stop exactly these VNFCs of the instance (its recorded
   * vnfcResourceInfo), e.g. one pod of a multi-replica workload; undefined when it can. Asked at the
   * request, so that the refusal is a 422 that changes nothing. A driver without it can operate any VNFC.
   */
  operateRefusal?(vnfcResourceInfo: Array<Record<string, unknown>>, change: OperateChange): string | undefined;
  /** Checks that the VIM answers and the credentials work: the probe of registration and the reachability sweep. */
  verify(vim: VimConnection): Promise<void>;
  /**
   * CREATE_SNAPSHOT, where the VIM can take snapshots: starts snapshotting the target VNFCs from the
   * VNF's driver state; polled until DONE, whose state (a SnapshotState) records every VNFC's snapshot.
   */
  snapshotStart?(ctx: OperationContext, state: DriverState, target: SnapshotTarget): Promise<SnapshotState>;
  snapshotPoll?(ctx: OperationContext, snapshot: SnapshotState): Promise<Progress>;
  /** Removes what a snapshot (complete or partial) holds on the VIM; what is already gone is fine. */
  deleteSnapshot?(vim: VimConnection, snapshot: SnapshotState): Promise<void>;
  /** REVERT_TO_SNAPSHOT: starts putting the VNF back as the snapshot has it; polled until DONE (the VNF's driver state from then on). */
  revertStart?(ctx: OperationContext, state: DriverState, target: RevertTarget): Promise<DriverState>;
  revertPoll?(ctx: OperationContext, state: DriverState, target: RevertTarget): Promise<Progress>;
}
