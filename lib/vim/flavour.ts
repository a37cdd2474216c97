// What every VIM driver and the LCM engine read from a VNFD's deployment flavour alike: the
// flavour itself, and how many instances a VDU starts with.
import type { FlavourInfo, ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';

export function flavourOf(vnfd: ParsedVnfd, flavourId: string): FlavourInfo {
  const flavour = vnfd.flavours.find((candidate) => candidate.flavourId === flavourId);
  if (!flavour)
    throw new UnprocessableEntityError(
      `The VNFD ${vnfd.vnfdId} has no deployment flavour "${flavourId}"; it has ${vnfd.flavours.map((candidate) => candidate.flavourId).join(', ')}`,
    );
  return flavour;
}

/** Instances of a VDU at instantiation: the level's count, else the initial delta, else the profile's minimum. */
export function desiredCapacity(flavour: FlavourInfo, vduId: string, instantiationLevelId: string | undefined): number {
  const level = instantiationLevelId ?? flavour.instantiationLevels.default;
  const byLevel = level !== undefined && Object.hasOwn(flavour.vduInstantiationLevels, vduId) ? flavour.vduInstantiationLevels[vduId] : undefined;
  if (level !== undefined && byLevel && Object.hasOwn(byLevel, level)) return byLevel[level] as number;
  if (Object.hasOwn(flavour.vduInitialDeltas, vduId)) return flavour.vduInitialDeltas[vduId] as number;
  return flavour.vdus.find((vdu) => vdu.id === vduId)?.vduProfile?.minNumberOfInstances ?? 1;
}
