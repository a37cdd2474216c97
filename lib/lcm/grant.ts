// SOL003 clause 9 granting: before it touches a VIM, an operation asks the NFVO for permission
// (POST {NFVO}/grant/v1/grants, lib/nfvo/client.ts) and takes the VIM assets the Grant names
// (images, flavours, zones). The NFVO answers with the Grant (201) or decides later (202 and a
// Location the state machine polls). Without a configured NFVO the VNFM grants itself. Request and
// Grant stay on the op occ, so a retry or rollback does not ask again.
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import type { VnfInstanceRecord, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import { ProblemError } from '#lib/sol/errors.ts';
import type { GrantDecision } from '#lib/vim/driver.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { EgressResponse } from '#lib/egress.ts';
import { nfvoClient, retryAfterMs } from '#lib/nfvo/client.ts';
import { grantUpdateResources } from './ext-conn.ts';
import { flavourGrantResources, type FlavourChangePlan } from './change-flavour.ts';

interface GrantInputs {
  opOcc: VnfLcmOpOccRecord;
  instance: VnfInstanceRecord;
  vnfd: ParsedVnfd;
}

export class GrantRefused extends ProblemError {
  constructor(detail: string) {
    super(403, 'Grant refused', detail);
    this.name = 'GrantRefused';
  }
}

/** The NFVO did not decide an asynchronous grant within NfvoGrantTimeoutSeconds. */
export class GrantTimedOut extends ProblemError {
  constructor(detail: string) {
    super(504, 'Grant timed out', detail);
    this.name = 'GrantTimedOut';
  }
}

function grantRequestOf(inputs: GrantInputs): Record<string, unknown> {
  const { opOcc, instance, vnfd } = inputs;
  if (opOcc.change?.kind === 'CHANGE_FLAVOUR') {
    const plan = opOcc.change as unknown as FlavourChangePlan;
    const flavour = vnfd.flavours.find((f) => f.flavourId === plan.newFlavourId);
    if (flavour) return { ...grantBase(inputs, plan.newFlavourId), ...flavourGrantResources(flavour, instance, plan) };
  }
  const params = (opOcc.operationParams ?? {}) as { flavourId?: string; instantiationLevelId?: string };
  const flavourId = params.flavourId ?? String(instance.instantiatedVnfInfo?.flavourId ?? '');
  const flavour = vnfd.flavours.find((f) => f.flavourId === flavourId);
  const resources = flavour
    ? [
        ...flavour.vdus.map((vdu) => ({ id: `${vdu.id}-compute`, type: 'COMPUTE', resourceTemplateId: vdu.id, vduId: vdu.id })),
        ...flavour.virtualLinks.map((vl) => ({ id: `${vl.id}-vl`, type: 'VL', resourceTemplateId: vl.id })),
        ...flavour.storages.map((st) => ({ id: `${st.id}-storage`, type: 'STORAGE', resourceTemplateId: st.id })),
      ]
    : [];
  const change = opOcc.change as
    | {
        kind?: string;
        scaleType?: string;
        targets?: Record<string, number>;
        remove?: Array<{ vduId: string; resourceId: string }>;
        vnfcs?: Array<{ vduId: string; resourceId: string }>;
      }
    | undefined;
  const vimConnectionId = instance.vimResources?.vim.connectionId;
  const existing = (vnfc: { vduId: string; resourceId: string }, index: number) => ({
    id: `${vnfc.vduId}-${index}`,
    type: 'COMPUTE',
    vduId: vnfc.vduId,
    resourceTemplateId: vnfc.vduId,
    resource: { ...(vimConnectionId ? { vimConnectionId } : {}), resourceId: vnfc.resourceId },
  });
  if (change?.kind === 'CHANGE_EXT_CONN') {
    // Nothing is added or removed: the VNFCs whose external CPs are reconnected are updated.
    const updated = grantUpdateResources(instance.instantiatedVnfInfo, (change as { cpdIds?: string[] }).cpdIds ?? [], vimConnectionId);
    return { ...grantBase(inputs, flavourId), ...(updated.length ? { updateResources: updated } : {}) };
  }
  // HEAL replaces its VNFCs, OPERATE changes their state: both update existing resources.
  if (change?.kind === 'HEAL' || change?.kind === 'OPERATE') {
    return { ...grantBase(inputs, flavourId), updateResources: (change.vnfcs ?? []).map(existing) };
  }
  if (change?.kind === 'SCALE') {
    if (change.scaleType === 'SCALE_IN') return { ...grantBase(inputs, flavourId), removeResources: (change.remove ?? []).map(existing) };
    return { ...grantBase(inputs, flavourId), addResources: addedCompute(instance, change.targets ?? {}) };
  }
  // Some VDUs may grow and others shrink in one SCALE_TO_LEVEL: both lists, each only when not empty.
  if (change?.kind === 'SCALE_TO_LEVEL') {
    const added = addedCompute(instance, change.targets ?? {});
    const removed = (change.remove ?? []).map(existing);
    return { ...grantBase(inputs, flavourId), ...(added.length ? { addResources: added } : {}), ...(removed.length ? { removeResources: removed } : {}) };
  }
  const adding = opOcc.operation === 'INSTANTIATE';
  return {
    ...grantBase(inputs, flavourId),
    ...(params.instantiationLevelId ? { instantiationLevelId: params.instantiationLevelId } : {}),
    ...(adding ? { addResources: resources } : { removeResources: resources }),
  };
}

/** The COMPUTE resources a scale adds: for each VDU, as many as its target exceeds the VNFCs it has. */
function addedCompute(instance: VnfInstanceRecord, targets: Record<string, number>): Array<Record<string, unknown>> {
  const counts: Record<string, number> = {};
  for (const vnfc of (instance.instantiatedVnfInfo?.vnfcResourceInfo ?? []) as Array<{ vduId: string }>) counts[vnfc.vduId] = (counts[vnfc.vduId] ?? 0) + 1;
  return Object.entries(targets).flatMap(([vduId, target]) =>
    Array.from({ length: Math.max(0, target - (counts[vduId] ?? 0)) }, (_, n) => ({
      id: `${vduId}-compute-${n + 1}`,
      type: 'COMPUTE',
      resourceTemplateId: vduId,
      vduId,
    })),
  );
}

function grantBase({ opOcc, instance }: GrantInputs, flavourId: string): Record<string, unknown> {
  return {
    vnfInstanceId: instance.id,
    vnfLcmOpOccId: opOcc.id,
    vnfdId: instance.vnfdId,
    flavourId,
    operation: opOcc.operation,
    isAutomaticInvocation: opOcc.isAutomaticInvocation,
    _links: { vnfLcmOpOcc: { href: `/vnflcm/v2/vnf_lcm_op_occs/${opOcc.id}` }, vnfInstance: { href: `/vnflcm/v2/vnf_instances/${instance.id}` } },
  };
}

/** What the driver takes from a Grant: VIM image and flavour ids and zones chosen by the NFVO. */
export function decisionOf(grant: Record<string, unknown>): GrantDecision {
  const assets = (grant.vimAssets ?? {}) as {
    softwareImages?: Array<{ vnfdSoftwareImageId: string; vimSoftwareImageId: string }>;
    computeResourceFlavours?: Array<{ vnfdVirtualComputeDescId: string; vimFlavourId: string }>;
  };
  return {
    images: Object.fromEntries((assets.softwareImages ?? []).map((i) => [i.vnfdSoftwareImageId, i.vimSoftwareImageId])),
    flavours: Object.fromEntries((assets.computeResourceFlavours ?? []).map((f) => [f.vnfdVirtualComputeDescId, f.vimFlavourId])),
    zones: (grant.zones ?? []) as GrantDecision['zones'],
  };
}

/**
 * The VIM zone the Grant places each VDU's new VNFCs in (SOL003 9.5.2.3 Grant.addResources[].zoneId,
 * a ZoneInfo id, on the resource definition whose resourceTemplateId is the VDU). The first one named
 * for a VDU wins: a VDU's VNFCs share one zone in the templates the drivers deploy.
 */
export function vduZonesOf(grant: Record<string, unknown> | undefined, grantRequest: Record<string, unknown> | undefined): Record<string, string> {
  const zones = new Map(((grant?.zones ?? []) as Array<{ id?: unknown; zoneId?: unknown }>).map((zone) => [String(zone.id), zone.zoneId]));
  const definitions = new Map(
    ((grantRequest?.addResources ?? []) as Array<{ id?: unknown; type?: unknown; resourceTemplateId?: unknown }>)
      .filter((definition) => definition.type === 'COMPUTE')
      .map((definition) => [String(definition.id), definition.resourceTemplateId]),
  );
  const placed: Record<string, string> = {};
  for (const info of (grant?.addResources ?? []) as Array<{ resourceDefinitionId?: unknown; zoneId?: unknown }>) {
    const vduId = definitions.get(String(info.resourceDefinitionId));
    const zoneId = info.zoneId === undefined ? undefined : zones.get(String(info.zoneId));
    if (typeof vduId === 'string' && typeof zoneId === 'string' && !Object.hasOwn(placed, vduId))
      Object.defineProperty(placed, vduId, { value: zoneId, enumerable: true, writable: true, configurable: true });
  }
  return placed;
}

/** What a driver takes from the op occ's Grant: the decision recorded with it, and where it places each VDU. */
export function grantDecisionOf(opOcc: Pick<VnfLcmOpOccRecord, 'grant' | 'grantRequest'>): GrantDecision {
  const decision = (opOcc.grant?.decision ?? {}) as GrantDecision;
  const vduZones = vduZonesOf(opOcc.grant, opOcc.grantRequest);
  return Object.keys(vduZones).length ? { ...decision, vduZones } : decision;
}

/** A grant the NFVO decides later (202): where to ask, and when it suggests asking again. */
export interface PendingGrant {
  location: string;
  retryAfterSeconds?: number;
}

export interface GrantOutcome {
  grantRequest: Record<string, unknown>;
  /** The Grant, with the `decision` the driver takes from it; absent while the NFVO is deciding. */
  grant?: Record<string, unknown>;
  pending?: PendingGrant;
}

const GRANT_API_VERSION = '1.5.0';

/** How long an asynchronous grant may take (NfvoGrantTimeoutSeconds) before the operation rolls back. */
export function grantTimeoutSeconds(): number {
  const configured = Number(process.env.NFVO_GRANT_TIMEOUT_SECONDS);
  return Number.isFinite(configured) && configured > 0 ? configured : 600;
}

/** The NFVO's own words for a refusal: its ProblemDetails' detail (SOL003 9.4.2.3.1: 403 "the grant has been rejected"). */
function refusal(status: number, body: string): GrantRefused {
  let detail = body.slice(0, 500);
  try {
    const problem = JSON.parse(body) as { detail?: unknown; title?: unknown };
    if (typeof problem.detail === 'string' && problem.detail) detail = problem.detail;
    else if (typeof problem.title === 'string' && problem.title) detail = problem.title;
  } catch {
    // Not ProblemDetails: the text is the reason.
  }
  return new GrantRefused(`The NFVO refused the grant (${status}): ${detail || 'no reason given'}`);
}

function granted(body: string): Record<string, unknown> {
  const grant = JSON.parse(body) as Record<string, unknown>;
  return { ...grant, decision: decisionOf(grant) };
}

function pendingOf(response: EgressResponse, location: string): PendingGrant {
  const wait = retryAfterMs(response.headers['retry-after']);
  return { location, ...(wait !== undefined ? { retryAfterSeconds: Math.ceil(wait / 1000) } : {}) };
}

/**
 * Asks for the grant (POST /grant/v1/grants): 201 is the Grant, 202 with Location a decision to
 * come (pollGrant asks for it), any other 4xx a refusal. Without a configured NFVO the VNFM grants itself.
 */
export async function grantFor(deps: CoreDeps, inputs: GrantInputs): Promise<GrantOutcome> {
  const grantRequest = grantRequestOf(inputs);
  const nfvo = nfvoClient(deps.secrets);
  if (!nfvo) {
    return { grantRequest, grant: { id: deps.newId(), vnfInstanceId: inputs.instance.id, vnfLcmOpOccId: inputs.opOcc.id, local: true, decision: {} } };
  }
  const response = await nfvo.call('grant/v1/grants', { method: 'POST', version: GRANT_API_VERSION, body: grantRequest });
  if (response.status === 201) return { grantRequest, grant: granted(response.body) };
  if (response.status === 202) {
    const location = response.headers.location;
    if (!location) throw new Error('The NFVO accepted the grant request (202) without a Location to ask for the decision');
    return { grantRequest, pending: pendingOf(response, nfvo.url(location)) };
  }
  if (response.status >= 400 && response.status < 500) throw refusal(response.status, response.body);
  throw new Error(`The NFVO's grant endpoint answered ${response.status}`);
}

/** Asks for a pending grant (GET its Location): 200 is the Grant, 202 still pending, 403 or another 4xx a refusal. */
export async function pollGrant(deps: CoreDeps, location: string): Promise<Omit<GrantOutcome, 'grantRequest'>> {
  const nfvo = nfvoClient(deps.secrets);
  if (!nfvo) throw new Error('A grant is pending, but no NFVO is configured any more (NfvoEndpoint)');
  const response = await nfvo.call(location, { method: 'GET', version: GRANT_API_VERSION });
  if (response.status === 200) return { grant: granted(response.body) };
  if (response.status === 202) return { pending: pendingOf(response, location) };
  if (response.status >= 400 && response.status < 500) throw refusal(response.status, response.body);
  throw new Error(`The NFVO answered ${response.status} for the grant at ${location}`);
}
