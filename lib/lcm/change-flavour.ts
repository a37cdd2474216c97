// CHANGE_FLAVOUR (SOL003 5.4.7): what a change of deployment flavour does, shared by its request
// (lib/lcm/requests/change-flavour.ts) and its steps (lib/lcm/engine/change-flavour.ts): the checks
// of the request against the instance and its VNFD, the plan kept on the op occ, the instantiate
// request later operations read once the VNF is in the new flavour, the Grant's resources, and
// instantiatedVnfInfo's flavour-dependent attributes.
import { isRecord } from '#lib/json.ts';
import { BadRequestError, ConflictError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { VnfInstanceRecord } from '#lib/sol/model.ts';
import type { ChangeVnfFlavourRequest } from '#lib/sol/requests.ts';
import type { FlavourInfo, ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import { desiredCapacity } from '#lib/vim/flavour.ts';

type Json = Record<string, unknown>;

/** What a CHANGE_FLAVOUR does, worked out from its request (stored on the op occ; no credentials). */
export interface FlavourChangePlan {
  kind: 'CHANGE_FLAVOUR';
  oldFlavourId: string;
  newFlavourId: string;
  /** The new flavour's instantiation level the VNF is sized to (else its default level). */
  instantiationLevelId?: string;
  /** Kubernetes: the manifests of the new flavour (additionalParams.lcm-kubernetes-def-files), else those the VNF runs. */
  defFiles?: string[];
}

export const DEF_FILES_PARAM = 'lcm-kubernetes-def-files';

const list = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isRecord) : []);

/**
 * Checks a ChangeVnfFlavourRequest against the instance and its VNFD, and works out the plan.
 * `defFiles` are the request's manifests once checked against the package (undefined when it names none).
 */
export function flavourChangePlan(vnfd: ParsedVnfd, instance: VnfInstanceRecord, request: ChangeVnfFlavourRequest, defFiles?: string[]): FlavourChangePlan {
  if (instance.instantiationState !== 'INSTANTIATED' || !instance.vimResources)
    throw new ConflictError(`VNF instance ${instance.id} is NOT_INSTANTIATED; only an instantiated VNF changes its deployment flavour`);
  const oldFlavourId = String(instance.instantiatedVnfInfo?.flavourId ?? '');
  const flavour = vnfd.flavours.find((candidate) => candidate.flavourId === request.newFlavourId);
  if (!flavour)
    throw new UnprocessableEntityError(
      `The VNFD ${vnfd.vnfdId} has no deployment flavour "${request.newFlavourId}"; its flavours are ${vnfd.flavours.map((f) => f.flavourId).join(', ')}`,
    );
  // The instance being in the flavour already is a conflict with its state (SOL003 5.4.7.3.1 409),
  // not a malformed request: the same body is right for an instance in another flavour. A change
  // of size within the flavour is SCALE_TO_LEVEL's.
  if (request.newFlavourId === oldFlavourId)
    throw new ConflictError(
      `VNF instance ${instance.id} is already in deployment flavour ${oldFlavourId}; change its instantiation level with SCALE_TO_LEVEL instead`,
    );
  const levels = Object.keys(flavour.instantiationLevels.levels);
  if (request.instantiationLevelId !== undefined && !levels.includes(request.instantiationLevelId))
    throw new BadRequestError(
      `Deployment flavour ${flavour.flavourId} has no instantiation level "${request.instantiationLevelId}"${levels.length ? `; it has ${levels.join(', ')}` : ''}`,
    );
  if (request.extManagedVirtualLinks?.length) throw new UnprocessableEntityError('extManagedVirtualLinks are not supported');
  const cpds = new Set([...flavour.cps.map((cp) => cp.id), ...flavour.extCps.map((cp) => cp.id)]);
  for (const [index, link] of (request.extVirtualLinks ?? []).entries()) {
    const unknown = link.extCps.map((cp) => cp.cpdId).filter((cpdId) => !cpds.has(cpdId));
    if (unknown.length)
      throw new BadRequestError(`extVirtualLinks.${index} connects ${unknown.join(', ')}, which deployment flavour ${flavour.flavourId} has no CP of`);
  }
  const vim = instance.vimResources.vim;
  for (const [connectionId, connection] of Object.entries(request.vimConnectionInfo ?? {})) {
    if (connectionId === vim.connectionId && connection.vimId !== undefined && connection.vimId !== vim.vimId)
      throw new UnprocessableEntityError(
        `vimConnectionInfo.${connectionId} is the connection the VNF runs on (VIM ${vim.vimId}); a flavour change keeps the VNF on its VIM`,
      );
  }
  return {
    kind: 'CHANGE_FLAVOUR',
    oldFlavourId,
    newFlavourId: flavour.flavourId,
    ...(request.instantiationLevelId !== undefined ? { instantiationLevelId: request.instantiationLevelId } : {}),
    ...(defFiles ? { defFiles } : {}),
  };
}

/**
 * The instantiate request later operations (scale, heal, terminate, another change) read once the
 * VNF is in the new flavour: its flavour and instantiation level, the external VLs the request
 * gives (replacing those of the same id; SOL003 lets unchanged ones be left out), and its
 * additionalParams over the earlier ones (the new flavour's manifests among them).
 */
export function instantiateRequestAfterFlavour(previous: Json | undefined, plan: FlavourChangePlan, request: Json): Json {
  const next: Json = { ...(previous ?? {}), flavourId: plan.newFlavourId };
  if (plan.instantiationLevelId !== undefined) next.instantiationLevelId = plan.instantiationLevelId;
  else delete next.instantiationLevelId;
  const links = list(request.extVirtualLinks);
  if (links.length) {
    const given = new Set(links.map((link) => String(link.id)));
    next.extVirtualLinks = [...list(previous?.extVirtualLinks).filter((link) => !given.has(String(link.id))), ...links];
  }
  const additional = {
    ...(isRecord(previous?.additionalParams) ? previous.additionalParams : {}),
    ...(isRecord(request.additionalParams) ? request.additionalParams : {}),
  };
  if (plan.defFiles) additional[DEF_FILES_PARAM] = plan.defFiles;
  if (Object.keys(additional).length) next.additionalParams = additional;
  return next;
}

/** scaleStatus and maxScaleLevels of a VNF just sized to `levelId` of `flavour` (its default level when none). */
export function scaleInfoAt(flavour: FlavourInfo, levelId: string | undefined): Json {
  const level = flavour.instantiationLevels.levels[levelId ?? flavour.instantiationLevels.default ?? ''];
  return {
    scaleStatus: flavour.scalingAspects.map((aspect) => ({ aspectId: aspect.id, scaleLevel: level?.scaleInfo?.[aspect.id]?.scaleLevel ?? 0 })),
    maxScaleLevels: flavour.scalingAspects.map((aspect) => ({ aspectId: aspect.id, scaleLevel: aspect.maxScaleLevel })),
  };
}

/**
 * The Grant's resources of a flavour change (SOL003 9.5.2.2): everything the instance has now is
 * removed (its VNFCs, VLs and storages, by their VIM resources), everything the new flavour has at
 * the target level is added. The VIM keeps what the two have in common (Heat updates in place,
 * Kubernetes replaces objects of the same name), but the NFVO grants by descriptor.
 */
export function flavourGrantResources(flavour: FlavourInfo, instance: VnfInstanceRecord, plan: FlavourChangePlan): Json {
  const info = instance.instantiatedVnfInfo;
  const vimConnectionId = instance.vimResources?.vim.connectionId;
  const handle = (resource: unknown): Json => ({
    ...(vimConnectionId ? { vimConnectionId } : {}),
    ...(isRecord(resource) ? resource : {}),
  });
  const removeResources = [
    ...list(info?.vnfcResourceInfo).map((vnfc, index) => ({
      id: `remove-compute-${index + 1}`,
      type: 'COMPUTE',
      vduId: String(vnfc.vduId),
      resourceTemplateId: String(vnfc.vduId),
      resource: handle(vnfc.computeResource),
    })),
    ...list(info?.vnfVirtualLinkResourceInfo).map((vl, index) => ({
      id: `remove-vl-${index + 1}`,
      type: 'VL',
      resourceTemplateId: String(vl.vnfVirtualLinkDescId),
      resource: handle(vl.networkResource),
    })),
    ...list(info?.virtualStorageResourceInfo).map((storage, index) => ({
      id: `remove-storage-${index + 1}`,
      type: 'STORAGE',
      resourceTemplateId: String(storage.virtualStorageDescId),
      resource: handle(storage.storageResource),
    })),
  ].filter((resource) => typeof resource.resource.resourceId === 'string');
  const addResources = [
    ...flavour.vdus.flatMap((vdu) =>
      Array.from({ length: desiredCapacity(flavour, vdu.id, plan.instantiationLevelId) }, (_, n) => ({
        id: `add-${vdu.id}-compute-${n + 1}`,
        type: 'COMPUTE',
        vduId: vdu.id,
        resourceTemplateId: vdu.id,
      })),
    ),
    ...flavour.virtualLinks.map((vl) => ({ id: `add-${vl.id}-vl`, type: 'VL', resourceTemplateId: vl.id })),
    ...flavour.storages.map((storage) => ({ id: `add-${storage.id}-storage`, type: 'STORAGE', resourceTemplateId: storage.id })),
  ];
  return {
    flavourId: plan.newFlavourId,
    ...(plan.instantiationLevelId !== undefined ? { instantiationLevelId: plan.instantiationLevelId } : {}),
    addResources,
    removeResources,
  };
}
