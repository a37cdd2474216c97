// CHANGE_VNFPKG (SOL003 5.4.11a; seed 004): move an instantiated VNF to another VNF package by a
// rolling update or blue-green, on the same engine and rules as every other operation. The request
// is checked before 202 (the new package ONBOARDED and ENABLED with the instance's flavour, the
// scripts and manifests it names present); the passwords of vdu_params and external_lb_param go to
// the secret store and reach only the coordinate scripts. The driver does the VIM work and stops
// where the seed runs CoordinateVNF; the engine runs the script and lets the driver go on. Only on
// success do the instance's records and the packages' usage move to the new package.
import { BadRequestError, ConflictError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { ApiMajorVersion, VnfInstanceRecord, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { ChangeCurrentVnfPkgRequest } from '#lib/sol/requests.ts';
import type { VnfPackageRecord } from '#lib/store/packages.ts';
import type { Coordination, PackageChange, PackageFiles } from '#lib/vim/driver.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { startOperation } from './operations.ts';
import { enabledPackageFor, getVnfInstance, packageAttributes } from './vnf-instances.ts';
import { type Caller } from '#lib/auth/tenancy.ts';
import { packagePath, runScript, scriptView } from './scripts.ts';
import { allowancesOf } from '#lib/scripts/network.ts';
import { checkDefinitionFiles } from './lifecycle.ts';
import { isRecord } from '#lib/json.ts';

type Json = Record<string, unknown>;

export interface CoordinateScript { script: string; className?: string }

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

function upgradeTypeOf(value: unknown): PackageChange['upgradeType'] {
  const normalised = typeof value === 'string' ? value.replace(/[-_\s]/g, '').toLowerCase() : '';
  if (normalised === 'rollingupdate') return 'RollingUpdate';
  if (normalised === 'bluegreen') return 'BlueGreen';
  throw new BadRequestError('additionalParams.upgrade_type must be "RollingUpdate" or "BlueGreen" (also written "Blue-Green")');
}

/** vdu_params as an array, or as the single object seed 004's example sends. */
function vduParamsOf(value: unknown): Json[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((entry, index) => {
    if (!isRecord(entry) || typeof entry.vdu_id !== 'string' || !entry.vdu_id) throw new BadRequestError(`additionalParams.vdu_params[${index}] needs a vdu_id`);
    for (const side of ['old_vnfc_param', 'new_vnfc_param']) {
      if (entry[side] !== undefined && !isRecord(entry[side])) throw new BadRequestError(`additionalParams.vdu_params[${index}].${side} must be an object (cp_name, username, password)`);
    }
    return entry;
  });
}

function scriptOf(params: Json, key: string): CoordinateScript | undefined {
  const script = params[key];
  if (script === undefined) return undefined;
  if (typeof script !== 'string' || !script) throw new BadRequestError(`additionalParams.${key} must be a path in the VNF package`);
  const className = params[`${key}-class`];
  if (className !== undefined && typeof className !== 'string') throw new BadRequestError(`additionalParams.${key}-class must be a string`);
  return { script: packagePath(script), ...(className ? { className } : {}) };
}

async function fileIn(files: PackageFiles[], path: string): Promise<boolean> {
  for (const candidate of files) if ((await candidate.list()).includes(path)) return true;
  return false;
}

export async function requestChangeVnfpkg(
  deps: CoreDeps,
  caller: Caller,
  id: string,
  request: ChangeCurrentVnfPkgRequest,
  version: ApiMajorVersion,
  packages: { vnfdOf: (packageId: string) => Promise<import('#lib/packages/vnfd/model.ts').ParsedVnfd>; filesOf: (pkg: VnfPackageRecord) => PackageFiles },
): Promise<VnfLcmOpOccRecord> {
  const instance = await getVnfInstance(deps, caller, id);
  if (instance.instantiationState !== 'INSTANTIATED' || !instance.vimResources) throw new ConflictError(`VNF instance ${id} is NOT_INSTANTIATED; only an instantiated VNF changes its package`);
  if (request.vimConnectionInfo) throw new UnprocessableEntityError('vimConnectionInfo in a ChangeCurrentVnfPkgRequest is not supported: the VNF stays on its VIM');
  if (request.extManagedVirtualLinks?.length) throw new UnprocessableEntityError('extManagedVirtualLinks are not supported');
  const params = request.additionalParams ?? {};
  const upgradeType = upgradeTypeOf(params.upgrade_type);
  const pkg = await enabledPackageFor(deps, caller, request.vnfdId);
  const vnfd = await packages.vnfdOf(pkg.id);
  const flavourId = String(instance.instantiatedVnfInfo?.flavourId ?? '');
  const flavour = vnfd.flavours.find((candidate) => candidate.flavourId === flavourId);
  if (!flavour) throw new UnprocessableEntityError(`The VNFD ${request.vnfdId} has no deployment flavour "${flavourId}", the flavour VNF instance ${id} is instantiated with`);

  const vduParams = vduParamsOf(params.vdu_params);
  const unknownVdus = vduParams.map((entry) => String(entry.vdu_id)).filter((vduId) => !flavour.vdus.some((vdu) => vdu.id === vduId));
  if (unknownVdus.length) throw new UnprocessableEntityError(`additionalParams.vdu_params names ${unknownVdus.join(', ')}, which flavour ${flavourId} of VNFD ${request.vnfdId} does not have`);
  if (params.external_lb_param !== undefined && !isRecord(params.external_lb_param)) throw new BadRequestError('additionalParams.external_lb_param must be an object');
  try {
    allowancesOf(params);
  } catch (error) {
    throw new BadRequestError((error as Error).message);
  }

  const newFiles = packages.filesOf(pkg);
  const oldPkg = await deps.packages.get(instance.vnfPkgId);
  const scriptPackages = oldPkg ? [newFiles, packages.filesOf(oldPkg)] : [newFiles];
  const coordinateNew = scriptOf(params, 'lcm-operation-coordinate-new-vnf');
  const coordinateOld = scriptOf(params, 'lcm-operation-coordinate-old-vnf');
  for (const script of [coordinateNew, coordinateOld]) {
    if (script && !await fileIn(scriptPackages, script.script)) throw new UnprocessableEntityError(`The VNF packages have no coordinate script ${script.script}`);
  }
  const defFiles = checkDefinitionFiles(pkg, params['lcm-kubernetes-def-files']);

  const change: ChangePlan = {
    kind: 'CHANGE_VNFPKG',
    vnfPkgId: pkg.id,
    vnfdId: request.vnfdId,
    upgradeType,
    vduIds: vduParams.map((entry) => String(entry.vdu_id)),
    ...(defFiles ? { defFiles } : {}),
    ...(coordinateNew ? { coordinateNew } : {}),
    ...(coordinateOld ? { coordinateOld } : {}),
  };
  return startOperation(deps, {
    tenantId: instance.tenantId,
    startedBy: caller.clientId,
    vnfInstanceId: id,
    operation: 'CHANGE_VNFPKG',
    operationParams: request,
    apiMajorVersion: version,
    requireState: 'INSTANTIATED',
    internal: { vim: instance.vimResources.vim, change: change as unknown as Json },
  });
}

/** The request as the scripts get it: with the credentials the NFVO gave for them. */
export async function scriptRequest(deps: CoreDeps, opOcc: VnfLcmOpOccRecord): Promise<Json> {
  const params = opOcc.operationParams ?? {};
  if (!opOcc.paramsSecret) return params;
  return { ...params, additionalParams: await deps.secrets.read(opOcc.paramsSecret) };
}

/**
 * Runs the CoordinateVNF script a driver asked for (the new VNF's or the old VNF's), with the VNFCs
 * and the vdu_params entry of their VDU. No script named for that side: nothing to coordinate.
 */
export async function coordinate(deps: CoreDeps, input: { opOcc: VnfLcmOpOccRecord; instance: VnfInstanceRecord; plan: ChangePlan; coordination: Coordination; isRollback: boolean; newFiles: PackageFiles; oldFiles: PackageFiles }): Promise<void> {
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
      target: coordination.target,
      is_rollback: input.isRollback,
    },
  });
}

/** Tacker's `ssh_ip`: the first VNFC's address on the CP named by its vnfc param's cp_name. */
function sshIpOf(coordination: Coordination, vnfcParam: unknown): { sshIp?: string } {
  const cpName = isRecord(vnfcParam) ? vnfcParam.cp_name ?? vnfcParam['cp-name'] : undefined;
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
      set[key] = { ...((instance as unknown as Json)[key] as Json | undefined ?? {}), ...request[key] };
      modifications[key] = request[key];
    }
  }
  return { set, modifications };
}

/** The instantiate request later operations read, with the manifests the VNF now runs. */
export function instantiateRequestAfter(previous: Json | undefined, plan: ChangePlan): Json {
  const request = { ...(previous ?? {}) };
  if (plan.defFiles) request.additionalParams = { ...(isRecord(request.additionalParams) ? request.additionalParams : {}), 'lcm-kubernetes-def-files': plan.defFiles };
  return request;
}
