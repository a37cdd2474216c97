// The VIM types this VNFM knows, and the one place that maps a type name to its driver. The SOL003
// names are canonical; Tacker's short names ('openstack', 'kubernetes') and the old keystone V_2
// name are aliases, matched case-insensitively, so a record or a request spelling any of them reaches
// the same driver. Drivers load on first use (dynamic import): a function that only ever meets one
// kind of VIM never loads the other driver's code.
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { InfraDriver } from '#lib/vim/driver.ts';

export const OPENSTACK_VIM = 'ETSINFV.OPENSTACK_KEYSTONE.V_3';
export const KUBERNETES_VIM = 'ETSINFV.KUBERNETES.V_1';

interface VimKind {
  /** The SOL003 vimType. */
  vimType: string;
  /** The name Tacker's NFVO API and python-tackerclient use (`type`, `--type`). */
  tackerType: string;
  /** Other names records and requests use for the same kind. */
  aliases: readonly string[];
  load(): Promise<InfraDriver>;
}

// Each import is spelt out (not built from a variable) so that a bundler sees both drivers; esbuild
// evaluates a dynamically imported module only when it is first imported.
const OPENSTACK: VimKind = {
  vimType: OPENSTACK_VIM,
  tackerType: 'openstack',
  aliases: ['ETSINFV.OPENSTACK_KEYSTONE.V_2'],
  load: async () => (await import('#lib/vim/openstack/driver.ts')).openStackDriver,
};
const KUBERNETES: VimKind = {
  vimType: KUBERNETES_VIM,
  tackerType: 'kubernetes',
  aliases: [],
  load: async () => (await import('#lib/vim/kubernetes/driver.ts')).kubernetesDriver,
};
const KINDS: readonly VimKind[] = [OPENSTACK, KUBERNETES];

/** What Tacker's NFVO API assumes when a VIM names no type (or one it no longer knows). */
export const TACKER_DEFAULT_VIM = OPENSTACK_VIM;

const BY_NAME = new Map(KINDS.flatMap((kind) => [kind.vimType, kind.tackerType, ...kind.aliases].map((name) => [name.toUpperCase(), kind] as const)));

const kindOf = (type: string): VimKind | undefined => BY_NAME.get(type.toUpperCase());

/** The SOL003 vimType of a type name (canonical, Tacker's short name or an old alias, any case); undefined when unsupported. */
export function canonicalVimType(type: string): string | undefined {
  return kindOf(type)?.vimType;
}

/** True when both names are the same supported kind of VIM (an unsupported name matches nothing). */
export function sameVimType(a: string, b: string): boolean {
  const kind = kindOf(a);
  return kind !== undefined && kind === kindOf(b);
}

/** The canonical vimType of a supported type name; a 422 naming the supported ones otherwise. */
export function supportedVimType(type: string): string {
  const vimType = canonicalVimType(type);
  if (!vimType)
    throw new UnprocessableEntityError(`VIM type "${type}" is not supported; use ${KINDS.map((kind) => `${kind.vimType} (${kind.tackerType})`).join(' or ')}`);
  return vimType;
}

/** Tacker's short name of a vimType; an unknown type shows as Tacker's default. */
export function tackerTypeOf(vimType: string): string {
  return (kindOf(vimType) ?? OPENSTACK).tackerType;
}

const loaded = new Map<string, InfraDriver>();

/**
 * Makes a driver known without a lookup having loaded it (its module's index does this on import):
 * for callers that need driverFor synchronously, such as the LCM steps.
 */
export function registerDriver(vimType: string, driver: InfraDriver): void {
  loaded.set(supportedVimType(vimType), driver);
}

/** The driver of a type if it is loaded already (by loadDriver or registerDriver); undefined otherwise. */
export function driverFor(vimType: string): InfraDriver | undefined {
  const canonical = canonicalVimType(vimType);
  return canonical === undefined ? undefined : loaded.get(canonical);
}

/** The driver of a type, loading its module (and only its) on first use; undefined when the type is unsupported. */
export async function loadDriver(vimType: string): Promise<InfraDriver | undefined> {
  const kind = kindOf(vimType);
  if (!kind) return undefined;
  const known = loaded.get(kind.vimType);
  if (known) return known;
  const driver = await kind.load();
  loaded.set(kind.vimType, driver);
  return driver;
}
