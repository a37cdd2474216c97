// The steps of CHANGE_VNFPKG (SOL003 5.4.11a; seed 004) and of its rollback: the driver moves the
// VNF to the new package (rolling update or blue-green) and stops where the seed runs CoordinateVNF;
// the step runs the script and lets the driver go on. A retry resumes from where the failed attempt
// stopped; a coordination that failed is asked for again, because the driver state is saved only
// once its script has succeeded. Only on success do the instance's records and the packages' usage
// move to the new package.
import { createHash } from 'node:crypto';
import { BadRequestError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { VnfPackageRecord } from '#lib/store/packages.ts';
import { flavourOf } from '#lib/vim/flavour.ts';
import type { Coordination, InfraDriver, OperationContext, PackageChange, Progress } from '#lib/vim/driver.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { saveDriverState, updateOpOcc } from '#lib/lcm/op-occs.ts';
import { resourceDiff } from '#lib/lcm/scale-heal.ts';
import { grantDecisionOf } from '#lib/lcm/grant.ts';
import { changedAttributes, coordinate, instantiateRequestAfter, type ChangePlan } from '#lib/lcm/change-package.ts';
import { driverOf, hook, instanceContext } from './context.ts';
import { collectedOf, infoAfter, lostLock } from './records.ts';
import { grant, grantPoll, restoredOnVim } from './shared-steps.ts';
import { polled, started, VimOperationFailed, type Loaded, type Step, type StepResult, type StepTable } from './step.ts';

/** What every step of the change works with: the driver, the current package's context and the new package's. */
interface Change {
  driver: InfraDriver;
  ctx: OperationContext;
  newCtx: OperationContext;
  pkg: VnfPackageRecord;
  plan: ChangePlan;
  change: PackageChange;
}

async function packageChangeOf(deps: CoreDeps, loaded: Loaded): Promise<Change> {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const driver = await driverOf(vim);
  const ctx = await instanceContext(deps, loaded, vim);
  const plan = opOcc.change as unknown as ChangePlan | undefined;
  if (plan?.kind !== 'CHANGE_VNFPKG') throw new BadRequestError(`VNF LCM operation occurrence ${opOcc.id} records no package change`);
  const pkg = await deps.packages.get(plan.vnfPkgId);
  if (pkg?.onboardingState !== 'ONBOARDED') throw new UnprocessableEntityError(`VNF package ${plan.vnfPkgId} is no longer onboarded`);
  const vnfd = await loaded.packages.vnfdOf(pkg.id);
  const flavour = flavourOf(vnfd, ctx.flavourId);
  const change: PackageChange = {
    upgradeType: plan.upgradeType,
    vnfPkgId: pkg.id,
    vnfd,
    files: loaded.packages.filesOf(pkg),
    flavourId: ctx.flavourId,
    vduIds: plan.vduIds.length ? plan.vduIds : flavour.vdus.map((vdu) => vdu.id),
    ...(plan.defFiles ? { defFiles: plan.defFiles } : {}),
    grant: grantDecisionOf(opOcc),
  };
  return { driver, ctx, newCtx: { ...ctx, vnfd: change.vnfd, files: change.files }, pkg, plan, change };
}

/** A poll's outcome; a COORDINATE runs the script before the driver state moves on. */
async function advance(deps: CoreDeps, loaded: Loaded, next: Change, progress: Progress, polls: number, isRollback: boolean): Promise<StepResult> {
  const { opOcc, instance } = loaded;
  if (progress.status === 'FAILED') {
    await saveDriverState(deps, opOcc, progress.state);
    throw new VimOperationFailed(progress.reason);
  }
  if (progress.status === 'COORDINATE') {
    // The EM first (additionalParams.lcmCoordination actions "at": "vnfc"), then the package's script.
    // While the EM has no result the driver state is not saved: the next poll asks the driver again.
    const waiting = isRollback ? undefined : await coordinateVnfcs(loaded, progress.coordinate, polls);
    if (waiting) return waiting;
    await coordinate(deps, {
      opOcc,
      instance,
      plan: next.plan,
      coordination: progress.coordinate,
      isRollback,
      newFiles: next.change.files,
      oldFiles: next.ctx.files,
    });
    await saveDriverState(deps, opOcc, progress.state);
    // Straight on: the next poll is the driver's next step, not a wait for the VIM.
    return { status: 'IN_PROGRESS', waitUntil: new Date().toISOString(), polls: polls + 1 };
  }
  await saveDriverState(deps, opOcc, progress.state);
  return polled(polls, progress.status === 'DONE' ? 'DONE' : 'IN_PROGRESS');
}

/** The EM's coordinations of the VNFCs the driver has just moved (forward only: a rollback is not put to the EM). */
function coordinateVnfcs(loaded: Loaded, coordination: Coordination, polls: number): Promise<StepResult | undefined> {
  const ledger = loaded.coordination;
  if (!ledger?.hasActionsAt('vnfc')) return Promise.resolve(undefined);
  const ids = coordination.vnfcs.map((vnfc) => vnfc.id ?? vnfc.resourceId);
  const batch = createHash('sha256')
    .update(`${coordination.target}\n${ids.join('\n')}`)
    .digest('hex')
    .slice(0, 16);
  return ledger.coordinate('vnfc', polls, batch, { vnfcInstanceIds: ids, target: coordination.target });
}

const start: Step = async (deps, loaded) => {
  const { opOcc, instance } = loaded;
  const next = await packageChangeOf(deps, loaded);
  if (opOcc.driverState) return started();
  await hook(deps, loaded, next.newCtx, 'start', next.change.vnfd, next.change.files);
  const state = await next.driver.changeStart(next.ctx, instance.vimResources?.driverState ?? {}, next.change);
  await saveDriverState(deps, opOcc, state);
  return started();
};

const poll: Step = async (deps, loaded, polls) => {
  const next = await packageChangeOf(deps, loaded);
  return advance(deps, loaded, next, await next.driver.changePoll(next.ctx, loaded.opOcc.driverState ?? {}, next.change), polls, false);
};

const finish: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  const next = await packageChangeOf(deps, loaded);
  await hook(deps, loaded, next.newCtx, 'end', next.change.vnfd, next.change.files);
  const driverState = opOcc.driverState ?? {};
  const before = collectedOf(instance.instantiatedVnfInfo);
  const info = infoAfter(instance, await next.driver.collect(next.newCtx, driverState));
  const { set, modifications } = changedAttributes(instance, next.pkg, next.plan, opOcc.operationParams ?? {});
  set.instantiatedVnfInfo = info;
  set.vimResources = {
    ...instance.vimResources,
    driverState,
    instantiateRequest: instantiateRequestAfter(instance.vimResources?.instantiateRequest, next.plan),
  };
  // Usage moves to the new package only now, with the records.
  if (!(await deps.packages.acquireUse(next.pkg.id))) throw new UnprocessableEntityError(`VNF package ${next.pkg.id} is no longer ONBOARDED and ENABLED`);
  if (!(await deps.instances.updateUnderLock(instance.id, opOcc.id, { set, remove: [] }))) {
    await deps.packages.releaseUse(next.pkg.id);
    throw lostLock(loaded);
  }
  await deps.packages.releaseUse(instance.vnfPkgId);
  const changes = resourceDiff(before, collectedOf(info), new Set(next.change.vduIds));
  await updateOpOcc(deps, opOcc, { resourceChanges: changes, modificationsTriggeredByVnfPkgChange: modifications });
  return polled(polls);
};

const rollbackStart: Step = async (deps, loaded) => {
  const { opOcc, instance } = loaded;
  const next = await packageChangeOf(deps, loaded);
  const state = await next.driver.changeRollbackStart(next.ctx, opOcc.driverState ?? instance.vimResources?.driverState ?? {}, next.change);
  await saveDriverState(deps, opOcc, state);
  return started();
};

const rollbackPoll: Step = async (deps, loaded, polls) => {
  const next = await packageChangeOf(deps, loaded);
  return advance(deps, loaded, next, await next.driver.changeRollbackPoll(next.ctx, loaded.opOcc.driverState ?? {}, next.change), polls, true);
};

export const changeVnfpkgSteps: StepTable = {
  grant,
  'grant-poll': grantPoll,
  'update-start': start,
  'update-poll': poll,
  'update-finish': finish,
  'rollback-start': rollbackStart,
  'rollback-poll': rollbackPoll,
  // Back on the old package.
  'rollback-finish': restoredOnVim,
};
