// The CHANGE_VNFPKG request (SOL003 5.4.11a; seed 004): move an instantiated VNF to another VNF
// package by a rolling update or blue-green. Checked before 202: the new package ONBOARDED and
// ENABLED with the instance's flavour, the coordinate scripts and manifests it names present.
// What the change does is worked out here once (lib/lcm/change-package.ts ChangePlan) and kept on
// the op occ for the steps.
import { BadRequestError, ConflictError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { ApiMajorVersion, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { ChangeCurrentVnfPkgRequest } from '#lib/sol/requests.ts';
import type { PackageChange, PackageFiles } from '#lib/vim/driver.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import { allowancesOf } from '#lib/scripts/network.ts';
import { checkDefinitionFiles, packageFiles, parsedVnfd } from '#lib/packages/access.ts';
import { requestedBy, startOperation } from '#lib/lcm/operations.ts';
import { getVnfInstance, usablePackageFor, type PackageSource } from '#lib/lcm/vnf-instances.ts';
import { packagePath } from '#lib/lcm/scripts.ts';
import { vduParamsOf, type ChangePlan, type CoordinateScript } from '#lib/lcm/change-package.ts';
import { isRecord } from '#lib/json.ts';

type Json = Record<string, unknown>;

function upgradeTypeOf(value: unknown): PackageChange['upgradeType'] {
  const normalised = typeof value === 'string' ? value.replace(/[-_\s]/g, '').toLowerCase() : '';
  if (normalised === 'rollingupdate') return 'RollingUpdate';
  if (normalised === 'bluegreen') return 'BlueGreen';
  throw new BadRequestError('additionalParams.upgrade_type must be "RollingUpdate" or "BlueGreen" (also written "Blue-Green")');
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
  source?: PackageSource,
): Promise<VnfLcmOpOccRecord> {
  const instance = await getVnfInstance(deps, caller, id);
  if (instance.instantiationState !== 'INSTANTIATED' || !instance.vimResources)
    throw new ConflictError(`VNF instance ${id} is NOT_INSTANTIATED; only an instantiated VNF changes its package`);
  if (request.vimConnectionInfo)
    throw new UnprocessableEntityError('vimConnectionInfo in a ChangeCurrentVnfPkgRequest is not supported: the VNF stays on its VIM');
  if (request.extManagedVirtualLinks?.length) throw new UnprocessableEntityError('extManagedVirtualLinks are not supported');
  const params = request.additionalParams ?? {};
  const upgradeType = upgradeTypeOf(params.upgrade_type);
  // A vnfdId the VNFM has no package for comes from the NFVO, as for a create.
  const pkg = await usablePackageFor(deps, caller, request.vnfdId, source);
  const vnfd = await parsedVnfd(pkg.id);
  const flavourId = String(instance.instantiatedVnfInfo?.flavourId ?? '');
  const flavour = vnfd.flavours.find((candidate) => candidate.flavourId === flavourId);
  if (!flavour)
    throw new UnprocessableEntityError(
      `The VNFD ${request.vnfdId} has no deployment flavour "${flavourId}", the flavour VNF instance ${id} is instantiated with`,
    );

  const vduParams = vduParamsOf(params.vdu_params);
  const unknownVdus = vduParams.map((entry) => String(entry.vdu_id)).filter((vduId) => !flavour.vdus.some((vdu) => vdu.id === vduId));
  if (unknownVdus.length)
    throw new UnprocessableEntityError(
      `additionalParams.vdu_params names ${unknownVdus.join(', ')}, which flavour ${flavourId} of VNFD ${request.vnfdId} does not have`,
    );
  if (params.external_lb_param !== undefined && !isRecord(params.external_lb_param))
    throw new BadRequestError('additionalParams.external_lb_param must be an object');
  try {
    allowancesOf(params);
  } catch (error) {
    throw new BadRequestError((error as Error).message);
  }

  const newFiles = packageFiles(pkg);
  const oldPkg = await deps.packages.get(instance.vnfPkgId);
  const scriptPackages = oldPkg ? [newFiles, packageFiles(oldPkg)] : [newFiles];
  const coordinateNew = scriptOf(params, 'lcm-operation-coordinate-new-vnf');
  const coordinateOld = scriptOf(params, 'lcm-operation-coordinate-old-vnf');
  for (const script of [coordinateNew, coordinateOld]) {
    if (script && !(await fileIn(scriptPackages, script.script)))
      throw new UnprocessableEntityError(`The VNF packages have no coordinate script ${script.script}`);
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
    ...requestedBy(caller),
    vnfInstanceId: id,
    operation: 'CHANGE_VNFPKG',
    operationParams: request,
    apiMajorVersion: version,
    requireState: 'INSTANTIATED',
    internal: { vim: instance.vimResources.vim, change: change as unknown as Json },
  });
}
