// The JSON contract between the LCM engine and the script runner function (the Lambda that runs a
// VNF package's vendor scripts, see sandbox.ts): what the engine sends, what it gets back. A failed
// script is an `ok: false` result whose `error` is the ProblemDetails the op occ stores, never a throw.
//
// What a script itself sees is documented in sandbox.ts (JavaScript: one JSON object on stdin, one on
// stdout; Python: Tacker's pickled dict on stdin, exactly as Tacker runs it).
import * as z from 'zod';
import { MAX_ALLOWANCES } from './network.ts';

/** Lambda's synchronous invocation payload limit (request and response), bytes. */
export const MAX_INVOKE_PAYLOAD_BYTES = 6 * 1024 * 1024;

export const scriptKinds = ['lcm-hook', 'coordinate'] as const;
export type ScriptKind = (typeof scriptKinds)[number];

const record = z.record(z.string(), z.unknown());

/**
 * What the script is told. Named fields are what the engine always has; the optional ones are what
 * Tacker hands its scripts besides (see sandbox.ts for how each reaches a Python script). Any other
 * field is passed on to JavaScript scripts as is.
 */
export const scriptInputSchema = z.looseObject({
  /** The hook's name (`instantiate_start`, `change_current_package_end`, ...) or, for CoordinateVNF, the LCM operation (`change_current_package`). */
  operation: z.string().min(1),
  request: record,
  vnfInstance: record,
  /** CoordinateVNF: the VnfcResourceInfo being coordinated. */
  vnfc: record.optional(),
  /** CoordinateVNF: `vdu_params[].new_vnfc_param` (or `old_vnfc_param` when rolling back) of the request, for the VNFC's VDU. */
  vnfcParam: record.optional(),
  is_rollback: z.boolean(),
  /** LCM hooks: the GrantRequest and Grant of the operation. */
  grantRequest: record.nullable().optional(),
  grant: record.nullable().optional(),
  /** LCM hooks: Tacker's `user_script_err_handling_data`, kept between a failed attempt and its retry or rollback. */
  userScriptErrHandlingData: record.optional(),
  /** CoordinateVNF: the address of the VNFC's connection point (Tacker's `ssh_ip`). */
  sshIp: z.string().optional(),
  /** CoordinateVNF: the LcmCoordRequest skeleton (Tacker's `LcmCoordRequest`). */
  lcmCoordRequest: record.optional(),
  /** CoordinateVNF: the id of the VNFC's vnfcInfo (Tacker's `vnfc_info_id`). */
  vnfcInfoId: z.string().optional(),
});
export type ScriptInput = z.infer<typeof scriptInputSchema>;

export const scriptRequestSchema = z.object({
  kind: z.enum(scriptKinds),
  /** Package path of the script (`Scripts/coordinate_vnf.py`, `./Scripts/x.js`); must be one of `files`. */
  script: z.string().min(1),
  /** Package path -> base64 content: the script and the files beside it that it may import or read. */
  files: z.record(z.string(), z.base64()),
  /** Tacker's `lcm-operation-coordinate-*-vnf-class`. Tacker itself does not use it (the script's own main picks its class), nor do we for Python; JavaScript scripts get it on stdin. */
  className: z.string().min(1).optional(),
  input: scriptInputSchema,
  /** Lower than the runner's own limits only; higher values are cut to them. */
  timeoutMs: z.number().int().positive().optional(),
  maxOutputBytes: z.number().int().positive().optional(),
  /** What the script may connect to; nothing when absent (the LCM request's additionalParams.scriptNetworkAccess, see network.ts). */
  network: z
    .object({
      allow: z.array(z.object({ host: z.union([z.ipv4(), z.ipv6()]), port: z.number().int().min(1).max(65535) })).max(MAX_ALLOWANCES),
    })
    .optional(),
});
export type ScriptRequest = z.infer<typeof scriptRequestSchema>;

/** Why a script failed; `error` says it in words. */
export const failureReasons = [
  'bad-request', // the request itself (paths, script type, schema)
  'unavailable', // the runner cannot run this kind of script (no python3)
  'exit', // the script exited non-zero or was killed by a signal it did not get from us
  'error', // the script reported an error on stdout ({"error": ...}, JavaScript)
  'invalid-output', // the script's stdout broke the JSON contract (JavaScript)
  'timeout', // killed at the time limit
  'output-limit', // killed for writing more than the output limit
  'runner', // the runner itself failed (spawn, invoke)
] as const;
export type FailureReason = (typeof failureReasons)[number];

const problemSchema = z.object({ title: z.string(), status: z.number().int(), detail: z.string() });
export type ScriptProblem = z.infer<typeof problemSchema>;

export const scriptResultSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), output: z.unknown().optional(), stdout: z.string(), stderr: z.string(), durationMs: z.number() }),
  // `output`: what a failing script still reported (its stdout `error` object; Tacker's pickled dict with
  // `user_script_err_handling_data`), for the engine to keep for the retry or rollback.
  z.object({
    ok: z.literal(false),
    error: problemSchema,
    reason: z.enum(failureReasons),
    output: z.unknown().optional(),
    stdout: z.string(),
    stderr: z.string(),
    durationMs: z.number(),
  }),
]);
export type ScriptResult = z.infer<typeof scriptResultSchema>;
export type ScriptFailure = Extract<ScriptResult, { ok: false }>;

/** A failure before or around the script (nothing ran, or the runner broke). */
export function failure(status: number, detail: string, reason: FailureReason, durationMs = 0): ScriptFailure {
  return { ok: false, error: { title: TITLES[status] ?? 'Script execution failed', status, detail }, reason, stdout: '', stderr: '', durationMs };
}

const TITLES: Record<number, string> = { 400: 'Bad Request', 413: 'Payload Too Large', 500: 'Internal Server Error' };

/** Tacker's ProblemDetails titles for a failing script (sol_refactored/common/exceptions.py), status 422. */
export function scriptFailureTitle(kind: ScriptKind): string {
  return kind === 'coordinate' ? 'Coordinate VNF execution failed' : 'Mgmt driver execution failed';
}

/** The first zod issue of a bad request, as a sentence. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid script request';
  const path = issue.path.map(String).join('.');
  return `invalid script request: ${path ? `${path}: ` : ''}${issue.message}`;
}

/** Keeps a result within Lambda's response limit: the logs are cut to their last 64 KiB first, then an output too large fails. */
export function fitInvokePayload(result: ScriptResult, limit = MAX_INVOKE_PAYLOAD_BYTES): ScriptResult {
  const size = (value: ScriptResult) => Buffer.byteLength(JSON.stringify(value));
  if (size(result) <= limit) return result;
  const tail = (text: string) => (text.length > 64 * 1024 ? `...${text.slice(-64 * 1024)}` : text);
  const cut = { ...result, stdout: tail(result.stdout), stderr: tail(result.stderr) };
  if (size(cut) <= limit) return cut;
  return {
    ...failure(500, "The script's result is larger than the script runner may answer", 'invalid-output', result.durationMs),
    stdout: '',
    stderr: tail(result.stderr).slice(-4096),
  };
}
