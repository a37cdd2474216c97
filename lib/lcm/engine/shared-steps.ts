// Steps several operations have alike: asking for the grant, a step with nothing to do, and the
// end of a rollback (the op occ forgets what the failed attempt did; the instance records what
// the VIM has once a rollback has changed it).
import type { CoreDeps } from '#lib/ports.ts';
import { updateOpOcc } from '#lib/lcm/op-occs.ts';
import { grantFor, GrantRefused, grantTimeoutSeconds, GrantTimedOut, pollGrant } from '#lib/lcm/grant.ts';
import { log } from '#lib/log.ts';
import { recollect } from './records.ts';
import { polled, type Loaded, type Step, type StepResult } from './step.ts';

/** Without a Retry-After, a pending grant is asked for again this often. */
export const GRANT_POLL_SECONDS = 5;

/** Poll a pending grant after `seconds` (the machine's Wait state, SecondsPath), never past its deadline. */
function grantWait(seconds: number, deadline: string): StepResult {
  const left = Math.max(0, Math.ceil((Date.parse(deadline) - Date.now()) / 1000));
  const wait = Math.min(Math.max(0, Math.round(seconds)), left);
  return { status: 'IN_PROGRESS', waitUntil: new Date(Date.now() + wait * 1000).toISOString(), waitSeconds: wait, polls: 0 };
}

/**
 * SOL003 clause 9, while the op occ is STARTING: asked once per op occ; a retry or rollback finds
 * it recorded. A grant the NFVO decides later (202) is recorded as pending, and grantPoll asks for it.
 */
export const grant: Step = async (deps, loaded, polls) => {
  const { opOcc } = loaded;
  if (opOcc.grant) return polled(polls);
  // The NFVO took the request already (this step ran again after a crash): poll, do not ask twice.
  if (opOcc.grantPending) return grantWait(0, opOcc.grantPending.deadline);
  const { grantRequest, grant: decided, pending } = await grantFor(deps, loaded);
  if (pending) {
    const deadline = new Date(Date.now() + grantTimeoutSeconds() * 1000).toISOString();
    await updateOpOcc(deps, opOcc, { grantRequest, grantPending: { location: pending.location, deadline } });
    return grantWait(pending.retryAfterSeconds ?? GRANT_POLL_SECONDS, deadline);
  }
  await updateOpOcc(deps, opOcc, { grantRequest, grant: decided, ...(decided?.local ? {} : { grantId: decided?.id }) });
  return polled(polls);
};

const timedOut = (pending: { location: string }, why: string) =>
  new GrantTimedOut(
    `The NFVO did not decide the grant within ${grantTimeoutSeconds()} s (NfvoGrantTimeoutSeconds); it is still pending at ${pending.location}${why}`,
  );

/** One poll of a pending grant: the Grant recorded once decided; past NfvoGrantTimeoutSeconds the operation fails. */
export const grantPoll: Step = async (deps, loaded, polls) => {
  const { opOcc } = loaded;
  if (opOcc.grant) return polled(polls);
  const pending = opOcc.grantPending;
  if (!pending) return grant(deps, loaded, polls);
  let outcome: Awaited<ReturnType<typeof pollGrant>>;
  try {
    outcome = await pollGrant(deps, pending.location);
  } catch (error) {
    // A refusal ends the operation; an NFVO that cannot answer now (5xx, unreachable, after the
    // client's own retries) may still decide in time, so it is asked again until the deadline.
    if (error instanceof GrantRefused) throw error;
    if (Date.now() >= Date.parse(pending.deadline)) throw timedOut(pending, `; asking for it last failed: ${(error as Error).message}`);
    log.warn('the NFVO could not be asked for a pending grant; asking again', { location: pending.location, error: (error as Error).message });
    return grantWait(GRANT_POLL_SECONDS, pending.deadline);
  }
  const { grant: decided, pending: still } = outcome;
  if (decided) {
    await updateOpOcc(deps, opOcc, { grant: decided, grantId: decided.id }, ['grantPending']);
    return polled(polls);
  }
  if (Date.now() >= Date.parse(pending.deadline)) throw timedOut(pending, '');
  return grantWait(still?.retryAfterSeconds ?? GRANT_POLL_SECONDS, pending.deadline);
};

export const nothingToDo: Step = async (_deps, _loaded, polls) => polled(polls);

/** A retried operation starts from scratch; a rolled-back one leaves nothing behind. */
export async function forgetAttempt(deps: CoreDeps, loaded: Loaded, polls: number): Promise<StepResult> {
  await updateOpOcc(deps, loaded.opOcc, {}, ['driverState', 'rollbackChange']);
  return polled(polls);
}

/** A rollback that put the VNF back as it was: the instance records what the VIM has now. */
export const restoredOnVim: Step = async (deps, loaded, polls) => {
  await recollect(deps, loaded, {}, false);
  return forgetAttempt(deps, loaded, polls);
};
