// The wire shape of a failed Step Functions task, as a Catch hands it to the next state, and the
// ProblemDetails the op occ records for it (VnfLcmOpOcc.error).
import type { ProblemDetailsRecord } from '#lib/sol/model.ts';
import { CANCELLED, CANCELLED_TITLE } from '#lib/lcm/cancellation.ts';

/** The `{Error, Cause}` that a Step Functions Catch puts in the state. */
export interface TaskFailure {
  Error?: string;
  Cause?: string;
}

const STATUS_BY_ERROR: Record<string, number> = {
  BadRequestError: 400,
  NotFoundError: 404,
  ConflictError: 409,
  UnprocessableEntityError: 422,
  'States.Timeout': 504,
  'States.TaskFailed': 500,
  [CANCELLED]: 409,
  // lib/lcm/grant.ts: the NFVO refused the grant, or did not decide it in time.
  GrantRefused: 403,
  GrantTimedOut: 504,
  // An LCM coordination (lib/lcm/coordination.ts): the EM said ABORT or CANCELLED, or gave no result.
  LcmCoordinationAborted: 409,
  LcmCoordinationFailed: 502,
};

/** Titles of the failures whose error name is not one. */
const TITLE_BY_ERROR: Record<string, string> = {
  [CANCELLED]: CANCELLED_TITLE,
  GrantRefused: 'Grant refused',
  GrantTimedOut: 'Grant timed out',
  LcmCoordinationAborted: 'LCM coordination aborted',
  LcmCoordinationFailed: 'LCM coordination failed',
};

/** Turns a caught task failure into the ProblemDetails stored as VnfLcmOpOcc.error. */
export function problemFromTaskFailure(failure: TaskFailure): ProblemDetailsRecord {
  const name = failure.Error ?? 'States.TaskFailed';
  let detail = failure.Cause ?? name;
  try {
    // Lambda reports a thrown error as {"errorType","errorMessage",...}.
    const parsed = JSON.parse(detail) as { errorMessage?: unknown };
    if (typeof parsed.errorMessage === 'string') detail = parsed.errorMessage;
  } catch {
    // A plain-text cause is already the detail.
  }
  return { title: TITLE_BY_ERROR[name] ?? name, status: STATUS_BY_ERROR[name] ?? 500, detail: detail || name };
}
