// The VNF vendor's scripts an LCM operation runs: the VNFD's Vnflcm interface hooks
// (`<operation>_start` before the VIM is touched, `<operation>_end` after it is done) and the
// CoordinateVNF scripts of CHANGE_VNFPKG. They run in the script runner (its own function, a child
// process with a scrubbed environment and limits), handed only what they need: the script and the
// files beside it, the request (with the credentials meant for the script), the instance without
// internal attributes, and the VNFCs concerned; no network but the host:port pairs the request lists
// in additionalParams.scriptNetworkAccess. A failing script fails the operation with the script's own
// message.
import { posix } from 'node:path';
import { ProblemError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import { VNF_INSTANCE_ATTRIBUTES, type LcmOperationType, type VnfInstanceRecord, type VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import type { PackageFiles } from '#lib/vim/driver.ts';
import { invokeScriptRunner } from '#lib/scripts/client.ts';
import type { ScriptRequest } from '#lib/scripts/contract.ts';
import { allowancesOf } from '#lib/scripts/network.ts';
import { log } from '#lib/log.ts';

/** SOL001 Vnflcm interface operation names of SOL003 operations. */
const HOOK_NAMES: Partial<Record<LcmOperationType, string>> = {
  INSTANTIATE: 'instantiate',
  TERMINATE: 'terminate',
  SCALE: 'scale',
  SCALE_TO_LEVEL: 'scale_to_level',
  HEAL: 'heal',
  OPERATE: 'operate',
  CHANGE_FLAVOUR: 'change_flavour',
  CHANGE_EXT_CONN: 'change_external_connectivity',
  MODIFY_INFO: 'modify_information',
  CHANGE_VNFPKG: 'change_current_package',
  // SOL001 v3.3.1 and later (tosca.interfaces.nfv.Vnflcm).
  CREATE_SNAPSHOT: 'create_snapshot',
  REVERT_TO_SNAPSHOT: 'revert_to_snapshot',
};

/** Scripts and the files beside them are handed to the runner inline; a package that needs more is refused. */
const MAX_SCRIPT_BYTES = 200 * 1024;

/** A vendor script failed; the op occ's error is its own message. */
export class ScriptFailed extends ProblemError {
  constructor(what: string, detail: string) {
    super(422, 'ScriptFailed', `${what} failed: ${detail}`);
    this.name = 'ScriptFailed';
  }
}

/** The package path a request names a script by (`./Scripts/x.py` and `Scripts/x.py` alike). */
export function packagePath(path: string): string {
  const normalised = posix.normalize(path.replace(/^\.\//, ''));
  if (normalised.startsWith('..') || posix.isAbsolute(normalised)) throw new UnprocessableEntityError(`${path} is not a path inside the VNF package`);
  return normalised;
}

/** The script and the files of its directory (helpers it imports), base64, within the size limit. */
async function scriptFiles(files: PackageFiles, script: string): Promise<Record<string, string>> {
  const all = await files.list();
  if (!all.includes(script)) throw new UnprocessableEntityError(`The VNF package has no script ${script}`);
  const dir = posix.dirname(script);
  const beside = all.filter((path) => path !== script && posix.dirname(path) === dir && /\.(py|js|mjs|cjs|json|ya?ml|txt)$/.test(path));
  const out: Record<string, string> = {};
  let total = 0;
  for (const path of [script, ...beside]) {
    const size = await files.size(path);
    if (path !== script && total + size > MAX_SCRIPT_BYTES) continue;
    total += size;
    if (total > MAX_SCRIPT_BYTES) throw new UnprocessableEntityError(`The script ${script} is larger than ${MAX_SCRIPT_BYTES} bytes`);
    out[path] = (await files.read(path)).toString('base64');
  }
  return out;
}

/** The instance as a script sees it: API attributes only (no secrets, no internal state). */
export function scriptView(instance: VnfInstanceRecord): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  for (const key of VNF_INSTANCE_ATTRIBUTES) {
    const value = (instance as unknown as Record<string, unknown>)[key];
    if (value !== undefined && key !== 'vimConnectionInfo') view[key] = value;
  }
  return view;
}

/** The request as the scripts get it: with the credentials the NFVO gave for them. */
export async function scriptRequest(deps: CoreDeps, opOcc: VnfLcmOpOccRecord): Promise<Record<string, unknown>> {
  const params = opOcc.operationParams ?? {};
  if (!opOcc.paramsSecret) return params;
  return { ...params, additionalParams: await deps.secrets.read(opOcc.paramsSecret) };
}

export interface ScriptRun {
  what: string;
  files: PackageFiles;
  script: string;
  kind: ScriptRequest['kind'];
  className?: string;
  input: ScriptRequest['input'];
}

/** What the LCM request lets its scripts connect to (`additionalParams.scriptNetworkAccess`); an unusable list is the request's fault. */
export function scriptNetworkOf(request: Record<string, unknown>): ScriptRequest['network'] {
  let allow: ReturnType<typeof allowancesOf>;
  try {
    allow = allowancesOf(request.additionalParams);
  } catch (error) {
    throw new UnprocessableEntityError((error as Error).message);
  }
  return allow.length ? { allow } : undefined;
}

/** Runs a script in the runner; throws ScriptFailed with the script's message when it fails. */
export async function runScript(run: ScriptRun): Promise<unknown> {
  const network = scriptNetworkOf(run.input.request);
  const request: ScriptRequest = {
    kind: run.kind,
    script: run.script,
    files: await scriptFiles(run.files, run.script),
    ...(run.className ? { className: run.className } : {}),
    input: run.input,
    ...(network ? { network } : {}),
  };
  const result = await invokeScriptRunner(request);
  log.info('vendor script ran', { script: run.script, kind: run.kind, ok: result.ok, durationMs: result.durationMs });
  if (!result.ok) throw new ScriptFailed(run.what, result.error.detail);
  return result.output;
}

/**
 * Runs the VNFD's `<operation>_start` or `_end` hook if the flavour declares one. Nothing to run is
 * not an error: most VNFDs declare no hooks.
 */
export async function runHook(hook: {
  operation: LcmOperationType;
  phase: 'start' | 'end';
  vnfd: ParsedVnfd;
  flavourId: string;
  files: PackageFiles;
  request: Record<string, unknown>;
  instance: VnfInstanceRecord;
  extra?: Record<string, unknown>;
}): Promise<void> {
  const base = HOOK_NAMES[hook.operation];
  if (!base) return;
  const name = `${base}_${hook.phase}`;
  const declared = hook.vnfd.flavours.find((flavour) => flavour.flavourId === hook.flavourId)?.lcmOperations[name];
  const file = declared?.artifact?.file;
  if (!file) return;
  await runScript({
    what: `The VNF package's ${name} script ${file}`,
    files: hook.files,
    script: file,
    kind: 'lcm-hook',
    input: { operation: name, request: hook.request, vnfInstance: scriptView(hook.instance), is_rollback: false, ...hook.extra },
  });
}
