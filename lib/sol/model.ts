// The SOL003 VNF LCM data model as this product stores and renders it: enumerations copied from
// the spec with their clause numbers, the stored record shapes, and the rendering of records into
// API representations (v2 = SOL003 V3.x / API 2.x.y; v1 = Tacker's SOL003 V2.6.1 / API 1.3.0).

/** SOL003 5.5.4.3 InstantiationState */
export const INSTANTIATION_STATES = ['NOT_INSTANTIATED', 'INSTANTIATED'] as const;
export type InstantiationState = (typeof INSTANTIATION_STATES)[number];

/** SOL003 5.5.4.5 LcmOperationType */
export const LCM_OPERATION_TYPES = [
  'INSTANTIATE',
  'SCALE',
  'SCALE_TO_LEVEL',
  'CHANGE_FLAVOUR',
  'TERMINATE',
  'HEAL',
  'OPERATE',
  'CHANGE_EXT_CONN',
  'MODIFY_INFO',
  'CREATE_SNAPSHOT',
  'REVERT_TO_SNAPSHOT',
  'CHANGE_VNFPKG',
] as const;
export type LcmOperationType = (typeof LCM_OPERATION_TYPES)[number];

/** SOL003 5.5.4.6 LcmOperationStateType */
export const LCM_OPERATION_STATES = ['STARTING', 'PROCESSING', 'COMPLETED', 'FAILED_TEMP', 'FAILED', 'ROLLING_BACK', 'ROLLED_BACK'] as const;
export type LcmOperationState = (typeof LCM_OPERATION_STATES)[number];

/** SOL003 CancelModeType: how an operation in progress is cancelled. */
export const CANCEL_MODES = ['GRACEFUL', 'FORCEFUL'] as const;
export type CancelModeType = (typeof CANCEL_MODES)[number];

/** States in which an op occ holds its VNF instance's operation lock (SOL003 5.4.1.2). */
export const LOCK_HOLDING_STATES: readonly LcmOperationState[] = ['STARTING', 'PROCESSING', 'ROLLING_BACK', 'FAILED_TEMP'];
export const TERMINAL_STATES: readonly LcmOperationState[] = ['COMPLETED', 'FAILED', 'ROLLED_BACK'];
/** States in which an operation may be cancelled (SOL003 5.4.17.3.1). */
export const CANCELLABLE_STATES: readonly LcmOperationState[] = ['STARTING', 'PROCESSING', 'ROLLING_BACK'];
/** Operations that cannot be rolled back: a TERMINATE may have deleted part of the VNF, a HEAL replaced VNFCs that are gone. */
export const NOT_ROLLED_BACK: readonly LcmOperationType[] = ['TERMINATE', 'HEAL'];

/**
 * Allowed op-occ transitions, as SOL003 5.4.1.2 (figure "States and transitions of a VNF
 * lifecycle management operation occurrence") draws them.
 */
export const OP_OCC_TRANSITIONS: Readonly<Record<LcmOperationState, readonly LcmOperationState[]>> = {
  STARTING: ['PROCESSING', 'ROLLED_BACK'],
  PROCESSING: ['COMPLETED', 'FAILED_TEMP'],
  FAILED_TEMP: ['PROCESSING', 'ROLLING_BACK', 'FAILED'],
  ROLLING_BACK: ['ROLLED_BACK', 'FAILED_TEMP'],
  COMPLETED: [],
  FAILED: [],
  ROLLED_BACK: [],
};

/** Where an operation's VIM is: a connection of the instance or a registered VIM; credentials stay in the secret store. */
export interface VimReference {
  connectionId: string;
  vimId: string;
  vimType: string;
  interfaceInfo: Record<string, unknown>;
  accessSecret: string;
  extra?: Record<string, unknown>;
}

export interface VimConnectionInfo {
  vimId?: string;
  vimType: string;
  interfaceInfo?: Record<string, unknown>;
  accessInfo?: Record<string, unknown>;
  extra?: Record<string, unknown>;
}

/** Stored VNF instance. Attributes starting with a lower-case letter and listed in VNF_INSTANCE_ATTRIBUTES are API-visible. */
export interface VnfInstanceRecord {
  id: string;
  tenantId: string;
  createdAt: string;
  /** GSI sort key: createdAt#id, a stable listing order. */
  createdSeq: string;
  vnfInstanceName?: string;
  vnfInstanceDescription?: string;
  vnfdId: string;
  vnfPkgId: string;
  vnfProvider: string;
  vnfProductName: string;
  vnfSoftwareVersion: string;
  vnfdVersion: string;
  vnfConfigurableProperties?: Record<string, unknown>;
  /** Map keyed by connection id; accessInfo is never stored here (see vimAccessSecrets). */
  vimConnectionInfo?: Record<string, VimConnectionInfo>;
  instantiationState: InstantiationState;
  instantiatedVnfInfo?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  /** Internal: connection id -> secret id holding that connection's accessInfo. */
  vimAccessSecrets?: Record<string, string>;
  /** Internal: the VIM the instance's resources are on and what the driver needs to find them again. */
  vimResources?: { vim: VimReference; driverState: Record<string, unknown>; instantiateRequest?: Record<string, unknown> };
  /** Internal: the op occ holding the per-instance operation lock. */
  lockOpOccId?: string;
  lockedAt?: string;
  /** Internal: optimistic concurrency counter. */
  revision: number;
}

export const VNF_INSTANCE_ATTRIBUTES = [
  'id',
  'vnfInstanceName',
  'vnfInstanceDescription',
  'vnfdId',
  'vnfProvider',
  'vnfProductName',
  'vnfSoftwareVersion',
  'vnfdVersion',
  'vnfConfigurableProperties',
  'vimConnectionInfo',
  'instantiationState',
  'instantiatedVnfInfo',
  'metadata',
  'extensions',
  '_links',
] as const;
/** v1 (SOL003 V2.6.1) adds vnfPkgId. */
export const VNF_INSTANCE_ATTRIBUTES_V1 = [...VNF_INSTANCE_ATTRIBUTES, 'vnfPkgId'] as const;

/** SOL003 5.4.2.3.2: complex attributes left out of lists unless asked for. */
export const VNF_INSTANCE_DEFAULT_EXCLUDED = ['vnfConfigurableProperties', 'vimConnectionInfo', 'instantiatedVnfInfo', 'metadata', 'extensions'] as const;

export interface ProblemDetailsRecord {
  type?: string;
  title?: string;
  status: number;
  detail: string;
  [extension: string]: unknown;
}

/** A state machine execution: the machine (by the operation it runs, or ROLLBACK) and the execution's name. */
export interface OperationExecution {
  machine: LcmOperationType | 'ROLLBACK';
  name: string;
}

export interface VnfLcmOpOccRecord {
  id: string;
  tenantId: string;
  /** The client id of the request that started it (internal). */
  startedBy?: string;
  /** Internal: the API root the request came through (the links of its LCM coordination requests). */
  apiRoot?: string;
  vnfInstanceId: string;
  operation: LcmOperationType;
  operationState: LcmOperationState;
  stateEnteredTime: string;
  startTime: string;
  /** GSI sort key: startTime#id. */
  startSeq: string;
  isAutomaticInvocation: boolean;
  isCancelPending: boolean;
  /** Present exactly while isCancelPending is true (SOL003 5.5.2.13). */
  cancelMode?: CancelModeType;
  operationParams?: Record<string, unknown>;
  error?: ProblemDetailsRecord;
  resourceChanges?: Record<string, unknown>;
  changedInfo?: Record<string, unknown>;
  changedExtConnectivity?: unknown[];
  /** Internal: connection id -> secret id with the accessInfo this operation brings. */
  pendingVimAccessSecrets?: Record<string, string>;
  /** Internal: the API major version the operation was requested through. */
  apiMajorVersion: 1 | 2;
  /** Internal: the VIM this operation works on (no credentials: a secret id). */
  vim?: VimReference;
  /** Internal: what the driver has created so far, for polling, retry and rollback. */
  driverState?: Record<string, unknown>;
  /** Internal: the change a SCALE or HEAL makes (worked out when it was requested), and the one its rollback makes. */
  change?: Record<string, unknown>;
  rollbackChange?: Record<string, unknown>;
  /** Internal: secret id of request parameters meant for the VNF's scripts (CHANGE_VNFPKG passwords); removed when the operation ends. */
  paramsSecret?: string;
  /** SOL003 GrantRequest and Grant, kept until the operation ends so retry and rollback need not ask again. */
  grantRequest?: Record<string, unknown>;
  grant?: Record<string, unknown>;
  /** Internal: a grant the NFVO is still deciding (202): where to poll it, and until when (NfvoGrantTimeoutSeconds). */
  grantPending?: { location: string; deadline: string };
  /** CREATE_SNAPSHOT and REVERT_TO_SNAPSHOT: the "Individual VNF snapshot" resource it fills or reverts to (SOL003 5.5.2.13). */
  vnfSnapshotInfoId?: string;
  /** SOL003 5.5.2.13 (V3.7.1): the LCM coordinations of this operation (SOL002 clause 10), and those an EM refused with 503 to be asked again. */
  lcmCoordinations?: LcmCoordinationInfo[];
  rejectedLcmCoordinations?: RejectedLcmCoordination[];
  /** Internal: the coordinations finished per attempt and the one under way (lib/lcm/coordination.ts). */
  coordination?: CoordinationProgress;
  /** Internal: how many times the operation's state machine has been started (retries). */
  attempts?: number;
  /** Internal: the state machine execution driving it now (the first is named after the op occ; retries and rollbacks have names of their own). */
  execution?: OperationExecution;
  revision: number;
}

/** An entry of VnfLcmOpOcc.lcmCoordinations (SOL003 V3.7.1 5.5.2.13). */
export interface LcmCoordinationInfo {
  id: string;
  coordinationActionName: string;
  /** Absent while it runs, and when it timed out (NOTE 4). */
  coordinationResult?: 'CONTINUE' | 'ABORT' | 'CANCELLED';
  startTime: string;
  endTime?: string;
  /** The end of the delay the last Retry-After of this coordination asked for. */
  delay?: string;
  endpointType: 'MGMT' | 'VNF';
}

/** An entry of VnfLcmOpOcc.rejectedLcmCoordinations: a 503 with Retry-After. */
export interface RejectedLcmCoordination {
  coordinationActionName: string;
  rejectionTime: string;
  delay: string;
  endpointType: 'MGMT' | 'VNF';
}

/** Internal: where an op occ's coordinations stand. */
export interface CoordinationProgress {
  /** What has finished with CONTINUE (and the engine's own marks), keyed by attempt and place. */
  done: string[];
  /** The coordination asked for and not finished yet. */
  pending?: {
    key: string;
    /** When it was first asked for: the time limit counts from here. */
    firstAskedAt: string;
    /** Not to be asked again before this (Retry-After, or the default back-off). */
    notBefore: string;
    /** The "Individual coordination action" resource to read (after a 202). */
    location?: string;
    /** Its entry in lcmCoordinations. */
    entry?: number;
  };
}

export const VNF_LCM_OP_OCC_ATTRIBUTES = [
  'id',
  'operationState',
  'stateEnteredTime',
  'startTime',
  'vnfInstanceId',
  'grantId',
  'operation',
  'isAutomaticInvocation',
  'operationParams',
  'isCancelPending',
  'cancelMode',
  'error',
  'resourceChanges',
  'changedInfo',
  'affectedVipCps',
  'changedExtConnectivity',
  'modificationsTriggeredByVnfPkgChange',
  'vnfSnapshotInfoId',
  'lcmCoordinations',
  'rejectedLcmCoordinations',
  'warnings',
  '_links',
] as const;

/** SOL003 5.4.12.3.2 (exclude_default): complex attributes left out of lists unless asked for. */
export const VNF_LCM_OP_OCC_DEFAULT_EXCLUDED = [
  'operationParams',
  'error',
  'resourceChanges',
  'changedInfo',
  'changedExtConnectivity',
  'lcmCoordinations',
  'modificationsTriggeredByVnfPkgChange',
  'warnings',
] as const;

export type ApiMajorVersion = 1 | 2;

function pick<T extends object>(record: T, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const value = (record as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** Strips credentials from VIM connection info; the API never returns accessInfo. */
export function publicVimConnectionInfo(info: Record<string, VimConnectionInfo> | undefined): Record<string, VimConnectionInfo> | undefined {
  if (!info) return undefined;
  return Object.fromEntries(Object.entries(info).map(([key, { accessInfo: _secret, ...rest }]) => [key, rest]));
}

// ---------------------------------------------------------------------------------------------
// The v1 model (SOL003 V2.6.1, as Tacker's v1 API shows it). Records hold the V3 model whichever API
// version made them; these turn its maps back into v1's arrays wherever /vnflcm/v1 shows them.

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** vimConnectionInfo: v1 an array whose items carry their own id; V3 a map keyed by that id. */
export function v1VimConnectionInfo(value: unknown): unknown {
  return isPlainObject(value) ? Object.entries(value).map(([id, info]) => ({ id, ...(isPlainObject(info) ? info : {}) })) : value;
}

/** An ext CP's data (VnfExtCpData): v1's cpConfig is an array of VnfExtCpConfig (with its cpInstanceId when it had one). */
function v1ExtCpData(cp: unknown): unknown {
  return isPlainObject(cp) && isPlainObject(cp.cpConfig) ? { ...cp, cpConfig: Object.values(cp.cpConfig) } : cp;
}

const mapList = (value: unknown, each: (item: unknown) => unknown): unknown => (Array.isArray(value) ? value.map(each) : value);

/** ExtVirtualLinkData (requests) and ExtVirtualLinkInfo (records) in the v1 model. */
export function v1ExtVirtualLinks(links: unknown): unknown {
  return mapList(links, (link) => {
    if (!isPlainObject(link)) return link;
    return {
      ...link,
      ...(link.extCps !== undefined ? { extCps: mapList(link.extCps, v1ExtCpData) } : {}),
      ...(link.currentVnfExtCpData !== undefined ? { currentVnfExtCpData: mapList(link.currentVnfExtCpData, v1ExtCpData) } : {}),
    };
  });
}

/** An op occ's (or a notification's) operationParams, changedInfo and changedExtConnectivity in the v1 model. */
export function v1OpOccParts(body: Record<string, unknown>): void {
  const params = body.operationParams;
  if (isPlainObject(params)) {
    body.operationParams = {
      ...params,
      ...(params.extVirtualLinks !== undefined ? { extVirtualLinks: v1ExtVirtualLinks(params.extVirtualLinks) } : {}),
      ...(params.vimConnectionInfo !== undefined ? { vimConnectionInfo: v1VimConnectionInfo(params.vimConnectionInfo) } : {}),
    };
  }
  const changed = body.changedInfo;
  if (isPlainObject(changed) && changed.vimConnectionInfo !== undefined)
    body.changedInfo = { ...changed, vimConnectionInfo: v1VimConnectionInfo(changed.vimConnectionInfo) };
  if (body.changedExtConnectivity !== undefined) body.changedExtConnectivity = v1ExtVirtualLinks(body.changedExtConnectivity);
  // SOL003 V2.6.1 has no LCM coordination (V3.x, with SOL002's coordination interface).
  delete body.lcmCoordinations;
  delete body.rejectedLcmCoordinations;
}

export function renderVnfInstance(record: VnfInstanceRecord, version: ApiMajorVersion, baseUrl: string): Record<string, unknown> {
  const prefix = `${baseUrl}/vnflcm/v${version}`;
  const self = `${prefix}/vnf_instances/${record.id}`;
  const body = pick(record, version === 1 ? VNF_INSTANCE_ATTRIBUTES_V1 : VNF_INSTANCE_ATTRIBUTES);
  const vim = publicVimConnectionInfo(record.vimConnectionInfo);
  if (vim) {
    // v1 models vimConnectionInfo as an array whose items carry their own id; v2 as a map.
    body.vimConnectionInfo = version === 1 ? v1VimConnectionInfo(vim) : vim;
  }
  const info = body.instantiatedVnfInfo;
  if (version === 1 && isPlainObject(info) && info.extVirtualLinkInfo !== undefined) {
    body.instantiatedVnfInfo = { ...info, extVirtualLinkInfo: v1ExtVirtualLinks(info.extVirtualLinkInfo) };
  }
  const links: Record<string, { href: string }> = { self: { href: self } };
  for (const [task, segment] of Object.entries(vnfInstanceTasks(record.instantiationState, version))) links[task] = { href: `${self}/${segment}` };
  body._links = links;
  return body;
}

export function renderVnfLcmOpOcc(record: VnfLcmOpOccRecord, version: ApiMajorVersion, baseUrl: string): Record<string, unknown> {
  const prefix = `${baseUrl}/vnflcm/v${version}`;
  const self = `${prefix}/vnf_lcm_op_occs/${record.id}`;
  const body = pick(record, VNF_LCM_OP_OCC_ATTRIBUTES);
  if (version === 1) v1OpOccParts(body);
  const links: Record<string, { href: string }> = {
    self: { href: self },
    vnfInstance: { href: `${prefix}/vnf_instances/${record.vnfInstanceId}` },
  };
  const grant = grantHref(record);
  if (grant) links.grant = { href: grant };
  for (const task of opOccTasks(record)) links[task] = { href: `${self}/${task}` };
  body._links = links;
  return body;
}

/** SOL003 5.5.2.13 `_links.grant`: the NFVO's Individual grant resource, once there is one (none when the VNFM granted itself). */
function grantHref(record: VnfLcmOpOccRecord): string | undefined {
  const self = (record.grant?._links as { self?: { href?: unknown } } | undefined)?.self?.href;
  if (typeof self === 'string' && !record.grant?.local) return self;
  return record.grantPending?.location;
}

// ---------------------------------------------------------------------------------------------
// The task resources a representation links (SOL003 5.5.2.2 and 5.5.2.13): exactly those the
// resource's state allows, so that a client can follow a link without a 409.

/** The tasks of an INSTANTIATED VNF instance: link name -> path segment. */
const INSTANTIATED_TASKS: Readonly<Record<string, string>> = {
  terminate: 'terminate',
  scale: 'scale',
  scaleToLevel: 'scale_to_level',
  changeFlavour: 'change_flavour',
  heal: 'heal',
  operate: 'operate',
  changeExtConn: 'change_ext_conn',
  changeCurrentVnfPkg: 'change_vnfpkg',
  createSnapshot: 'create_snapshot',
  revertToSnapshot: 'revert_to_snapshot',
};
/** The v1 API (Tacker's, SOL003 V2.6.1) serves only these of them. */
const V1_INSTANTIATED_TASKS: readonly string[] = ['terminate', 'scale', 'heal', 'changeExtConn'];

/**
 * The task resources a VNF instance in `state` links on API `version`, by link name, with the path
 * segment each is served at: instantiate while NOT_INSTANTIATED, every other LCM task while
 * INSTANTIATED. `indicators` is not linked: the VNF indicator interface is not served.
 */
export function vnfInstanceTasks(state: InstantiationState, version: ApiMajorVersion): Record<string, string> {
  if (state === 'NOT_INSTANTIATED') return { instantiate: 'instantiate' };
  const tasks = version === 1 ? V1_INSTANTIATED_TASKS : Object.keys(INSTANTIATED_TASKS);
  return Object.fromEntries(tasks.map((task) => [task, INSTANTIATED_TASKS[task] as string]));
}

/**
 * The task resources an op occ links (its path segments are their names): cancel while it is
 * STARTING, PROCESSING or ROLLING_BACK; retry and fail in FAILED_TEMP, and rollback there too
 * unless the operation cannot be rolled back.
 */
export function opOccTasks(record: Pick<VnfLcmOpOccRecord, 'operation' | 'operationState'>): string[] {
  if (CANCELLABLE_STATES.includes(record.operationState)) return ['cancel'];
  if (record.operationState !== 'FAILED_TEMP') return [];
  return NOT_ROLLED_BACK.includes(record.operation) ? ['retry', 'fail'] : ['retry', 'rollback', 'fail'];
}

// ---------------------------------------------------------------------------------------------
// VNF snapshots (SOL003 5.5.2.22 VnfSnapshotInfo, 5.5.2.21 VnfSnapshot, 5.5.3.19 VnfcSnapshotInfo)

/** What a VNFC snapshot holds on the VIM, as its driver recorded it (no credentials). */
export interface VnfcSnapshotRecord {
  id: string;
  vnfcInstanceId: string;
  vnfcResourceInfoId: string;
  vduId: string;
  creationStartedAt: string;
  creationFinishedAt?: string;
  computeSnapshotResource?: Record<string, unknown>;
  storageSnapshotResources?: Array<{ storageResourceId: string; storageSnapshotResource?: Record<string, unknown> }>;
  userDefinedData?: Record<string, unknown>;
}

/** A VNF snapshot as taken by CREATE_SNAPSHOT: the instance as it was, and its VNFCs' snapshots. */
export interface VnfSnapshotRecord {
  id: string;
  vnfInstanceId: string;
  creationStartedAt: string;
  creationFinishedAt?: string;
  vnfdId: string;
  /** The instance record's API-visible attributes when the snapshot was taken (rendered with links on read). */
  vnfInstance: Record<string, unknown>;
  vnfcSnapshots: VnfcSnapshotRecord[];
  userDefinedData?: Record<string, unknown>;
}

/** Stored "Individual VNF snapshot" resource. */
export interface VnfSnapshotInfoRecord {
  id: string;
  tenantId: string;
  createdAt: string;
  /** GSI sort key: createdAt#id. */
  createdSeq: string;
  vnfSnapshotPkgId?: string;
  vnfSnapshot?: VnfSnapshotRecord;
  /** Internal: the op occ that fills it (CREATE_SNAPSHOT) or reverts to it; it is in use while that op occ has not ended. */
  usedBy?: string;
  usedSince?: string;
  /** Internal: the VIM holding its snapshots and the driver's record of them, for revert and deletion. */
  vim?: VimReference;
  driverState?: Record<string, unknown>;
  revision: number;
}

export const VNF_SNAPSHOT_INFO_ATTRIBUTES = ['id', 'vnfSnapshotPkgId', 'vnfSnapshot', '_links'] as const;
/** SOL003 5.4.23.3.2: a VNF snapshot's instance and VNFC snapshots are left out of lists unless asked for. */
export const VNF_SNAPSHOT_INFO_DEFAULT_EXCLUDED = ['vnfSnapshot/vnfInstance', 'vnfSnapshot/vnfcSnapshots'] as const;

export function renderVnfSnapshotInfo(record: VnfSnapshotInfoRecord, baseUrl: string): Record<string, unknown> {
  const prefix = `${baseUrl}/vnflcm/v2`;
  const body: Record<string, unknown> = { id: record.id };
  if (record.vnfSnapshotPkgId !== undefined) body.vnfSnapshotPkgId = record.vnfSnapshotPkgId;
  const links: Record<string, { href: string }> = { self: { href: `${prefix}/vnf_snapshots/${record.id}` } };
  const snapshot = record.vnfSnapshot;
  if (snapshot) {
    body.vnfSnapshot = {
      id: snapshot.id,
      vnfInstanceId: snapshot.vnfInstanceId,
      creationStartedAt: snapshot.creationStartedAt,
      ...(snapshot.creationFinishedAt ? { creationFinishedAt: snapshot.creationFinishedAt } : {}),
      vnfdId: snapshot.vnfdId,
      vnfInstance: renderVnfInstance(snapshot.vnfInstance as unknown as VnfInstanceRecord, 2, baseUrl),
      vnfcSnapshots: snapshot.vnfcSnapshots.map(({ vduId: _vduId, ...vnfc }) => vnfc),
      ...(snapshot.userDefinedData ? { userDefinedData: snapshot.userDefinedData } : {}),
    };
    links.takenFrom = { href: `${prefix}/vnf_instances/${snapshot.vnfInstanceId}` };
  }
  body._links = links;
  return body;
}
