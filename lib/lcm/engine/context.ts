// What a step hands a VIM driver: the driver for the operation's VIM, and the operation context
// (the VNFD, the package's files, the VIM reached where the registry says now, the grant); and the
// VNFD's Vnflcm hook scripts a step runs before and after the VIM work.
import { BadRequestError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { VimReference } from '#lib/sol/model.ts';
import type { InstantiateVnfRequest } from '#lib/sol/requests.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import { loadDriver } from '#lib/vim/registry.ts';
import type { InfraDriver, OperationContext, PackageFiles, VimConnection } from '#lib/vim/driver.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { runHook, scriptRequest } from '#lib/lcm/scripts.ts';
import { grantDecisionOf } from '#lib/lcm/grant.ts';
import type { Loaded } from './step.ts';

const VIM_CREDENTIALS_MAX_AGE_MS = 60_000;

export async function vimConnection(deps: CoreDeps, vim: VimReference | undefined): Promise<VimConnection> {
  if (!vim) throw new BadRequestError('The operation has no VIM');
  // A registered VIM is reached where the registry says now (it may have moved since the request,
  // e.g. a VIM re-registered at a new endpoint while an operation waited to resume).
  const registered = await deps.vims.get(vim.vimId);
  const interfaceInfo = registered && registered.accessSecret === vim.accessSecret ? registered.interfaceInfo : vim.interfaceInfo;
  // Credentials read within the last minute will do: a poll loop reads them once, not at every poll.
  return {
    vimId: vim.vimId,
    vimType: vim.vimType,
    interfaceInfo,
    accessInfo: await deps.secrets.read(vim.accessSecret, { maxAgeMs: VIM_CREDENTIALS_MAX_AGE_MS }),
    extra: vim.extra,
  };
}

/** The context of an operation on the VIM `vim`, the VNF being (or having been) made by `instantiateRequest` in `flavourId`. */
export async function operationContext(
  deps: CoreDeps,
  loaded: Loaded,
  vim: VimReference | undefined,
  instantiateRequest: Record<string, unknown>,
  flavourId: string,
): Promise<OperationContext> {
  const { instantiationLevelId } = instantiateRequest as Partial<InstantiateVnfRequest>;
  return {
    vnfInstanceId: loaded.instance.id,
    opOccId: loaded.opOcc.id,
    vnfd: loaded.vnfd,
    flavourId,
    ...(instantiationLevelId !== undefined ? { instantiationLevelId } : {}),
    request: loaded.opOcc.operationParams ?? {},
    instantiateRequest,
    files: loaded.files,
    vim: await vimConnection(deps, vim),
    grant: grantDecisionOf(loaded.opOcc),
  };
}

/** The context of an operation on an instantiated VNF: as its INSTANTIATE made it, in the flavour it has. */
export function instanceContext(deps: CoreDeps, loaded: Loaded, vim: VimReference | undefined): Promise<OperationContext> {
  const instantiateRequest = loaded.instance.vimResources?.instantiateRequest ?? {};
  const flavourId = String(loaded.instance.instantiatedVnfInfo?.flavourId ?? (instantiateRequest as Partial<InstantiateVnfRequest>).flavourId ?? '');
  return operationContext(deps, loaded, vim, instantiateRequest, flavourId);
}

/** The VIM's driver, loading only its module (a function that runs OpenStack steps never loads the Kubernetes client). */
export async function driverOf(vim: VimReference | undefined): Promise<InfraDriver> {
  const driver = vim ? await loadDriver(vim.vimType) : undefined;
  if (!driver) throw new UnprocessableEntityError(`No driver for VIM type ${vim?.vimType ?? '(none)'}`);
  return driver;
}

/** Runs the VNFD's Vnflcm `<operation>_start`/`_end` script of this operation, if it declares one. */
export async function hook(
  deps: CoreDeps,
  loaded: Loaded,
  ctx: OperationContext,
  phase: 'start' | 'end',
  vnfd: ParsedVnfd = loaded.vnfd,
  files: PackageFiles = ctx.files,
): Promise<void> {
  await runHook({
    operation: loaded.opOcc.operation,
    phase,
    vnfd,
    flavourId: ctx.flavourId,
    files,
    request: await scriptRequest(deps, loaded.opOcc),
    instance: loaded.instance,
    extra: { grantRequest: loaded.opOcc.grantRequest ?? null, grant: loaded.opOcc.grant ?? null },
  });
}
