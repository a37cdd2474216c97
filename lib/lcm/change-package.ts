// CHANGE_VNFPKG (SOL003 5.4.11a; seed 004): what a change of package does, shared by its request
// (lib/lcm/requests/change-vnfpkg.ts) and its steps (lib/lcm/engine/change-vnfpkg.ts): the plan kept
// on the op occ, the CoordinateVNF scripts the engine runs where the driver stops for them (the
// passwords of vdu_params and external_lb_param reach only these scripts), and the instance's
// attributes once the change has succeeded.
import { isRecord } from '#lib/json.ts';
import { BadRequestError } from '#lib/sol/errors.ts';
import type { VnfInstanceRecord, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { VnfPackageRecord } from '#lib/store/packages.ts';
import type { Coordination, PackageChange, PackageFiles } from '#lib/vim/driver.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { packageAttributes } from './instance-records.ts';
import { runScript, scriptRequest, scriptView } from './scripts.ts';
import { lcmCoordRequestSkeleton } from './coordination.ts';

type Json = Record<string, unknown>;

export interface CoordinateScript {
  script: string;
  className?: string;
}

/** What a CHANGE_VNFPKG does, worked out from its request (stored on the op occ; no credentials). */
export interface ChangePlan {
  kind: 'CHANGE_VNFPKG';
  vnfPkgId: string;
  vnfdId: string;
  upgradeType: PackageChange['upgradeType'];
  vduIds: string[];
  defFiles?: string[];
  coordinateNew?: CoordinateScript;
  coordinateOld?: CoordinateScript;
}

/** vdu_params as an array, or as the single object seed 004's example sends. */
export function vduParamsOf(value: unknown): Json[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((entry, index) => {
    if (!isRecord(entry) || typeof entry.vdu_id !== 'string' || !entry.vdu_id)
      throw new BadRequestError(`additionalParams.vdu_params[${index}] needs a vdu_id`);
    for (const side of ['old_vnfc_param', 'new_vnfc_param']) {
      if (entry[side] !== undefined && !isRecord(entry[side]))
        throw new BadRequestError(`additionalParams.vdu_params[${index}].${side} must be an object (cp_name, username, password)`);
    }
    return entry;
  });
}

/**
 * Runs the CoordinateVNF script a driver asked for (the new VNF's or the old VNF's), with the VNFCs
 * and the vdu_params entry of their VDU. No script named for that side: nothing to coordinate.
 */
export async function coordinate(
  deps: CoreDeps,
  input: {
    opOcc: VnfLcmOpOccRecord;
    instance: VnfInstanceRecord;
    plan: ChangePlan;
    coordination: Coordination;
    isRollback: boolean;
    newFiles: PackageFiles;
    oldFiles: PackageFiles;
  },
): Promise<void> {
  const { plan, coordination } = input;
  const script = coordination.target === 'new' ? plan.coordinateNew : plan.coordinateOld;
  if (!script) return;
  const request = await scriptRequest(deps, input.opOcc);
  const additional = isRecord(request.additionalParams) ? request.additionalParams : {};
  const vduParams = vduParamsOf(additional.vdu_params);
  const vduId = coordination.vnfcs[0]?.vduId;
  const entry = vduParams.find((candidate) => candidate.vdu_id === vduId);
  const vnfcParam = entry?.[coordination.target === 'new' ? 'new_vnfc_param' : 'old_vnfc_param'];
  const files = (await input.newFiles.list()).includes(script.script) ? input.newFiles : input.oldFiles;
  await runScript({
    what: `The ${coordination.target === 'new' ? 'new' : 'old'} VNF's coordinate script ${script.script}`,
    files,
    script: script.script,
    kind: 'coordinate',
    ...(script.className ? { className: script.className } : {}),
    input: {
      operation: 'change_current_package',
      request,
      vnfInstance: scriptView(input.instance),
      vnfcs: coordination.vnfcs,
      ...(coordination.vnfcs[0] ? { vnfc: { ...coordination.vnfcs[0] } as Json } : {}),
      ...(isRecord(vnfcParam) ? { vnfcParam } : {}),
      ...sshIpOf(coordination, vnfcParam),
      ...(coordination.vnfcs[0]?.id ? { vnfcInfoId: `${coordination.vnfcs[0].vduId}-${coordination.vnfcs[0].id}` } : {}),
      vduParams,
      ...(isRecord(additional.external_lb_param) ? { externalLbParam: additional.external_lb_param } : {}),
      ...(coordination.details ? { details: coordination.details } : {}),
      // For a script that coordinates with the EM itself (samples/scripts/lcm-coordination.cjs; Tacker's LcmCoordRequest).
      lcmCoordRequest: lcmCoordRequestSkeleton(input.opOcc, { vnfcInstanceIds: coordination.vnfcs.map((vnfc) => vnfc.id ?? vnfc.resourceId) }),
      target: coordination.target,
      is_rollback: input.isRollback,
    },
  });
}

/** Tacker's `ssh_ip`: the first VNFC's address on the CP named by its vnfc param's cp_name. */
function sshIpOf(coordination: Coordination, vnfcParam: unknown): { sshIp?: string } {
  const cpName = isRecord(vnfcParam) ? (vnfcParam.cp_name ?? vnfcParam['cp-name']) : undefined;
  const address = typeof cpName === 'string' ? coordination.vnfcs[0]?.addresses?.[cpName]?.[0] : undefined;
  return address ? { sshIp: address } : {};
}

/** The instance's attributes after a completed CHANGE_VNFPKG (besides instantiatedVnfInfo and the driver state). */
export function changedAttributes(instance: VnfInstanceRecord, pkg: VnfPackageRecord, plan: ChangePlan, request: Json): { set: Json; modifications: Json } {
  const attributes = packageAttributes(pkg);
  const set: Json = { ...attributes };
  const { vnfPkgId: _internal, ...visible } = attributes;
  const modifications: Json = { ...visible };
  if (plan.defFiles) {
    set.metadata = { ...(instance.metadata ?? {}), 'lcm-kubernetes-def-files': plan.defFiles };
    modifications.metadata = { 'lcm-kubernetes-def-files': plan.defFiles };
  }
  for (const key of ['vnfConfigurableProperties', 'extensions'] as const) {
    if (isRecord(request[key])) {
      set[key] = { ...(((instance as unknown as Json)[key] as Json | undefined) ?? {}), ...request[key] };
      modifications[key] = request[key];
    }
  }
  return { set, modifications };
}

/** The instantiate request later operations read, with the manifests the VNF now runs. */
export function instantiateRequestAfter(previous: Json | undefined, plan: ChangePlan): Json {
  const request = { ...(previous ?? {}) };
  if (plan.defFiles)
    request.additionalParams = { ...(isRecord(request.additionalParams) ? request.additionalParams : {}), 'lcm-kubernetes-def-files': plan.defFiles };
  return request;
}
