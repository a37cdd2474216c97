// CHANGE_VNFPKG on OpenStack (seed 004), as steps that never wait: each poll reads where Heat or
// Glance stand and issues the next request, and the state records every step taken, so a poll, a
// retry or a rollback knows exactly what has changed. The two kinds are change/rolling-update.ts
// and change/blue-green.ts; rollback works from the progress the failed attempt recorded. A retry
// (a poll of the state a failure left, or changeStart with it) issues the failed step again and
// goes on.
import { log } from '#lib/log.ts';
import type { DriverState, OperationContext, PackageChange, Progress } from '#lib/vim/driver.ts';
import { stateOf } from './state.ts';
import { type Env, type Working, blueGreenStackNameOf, changeOf, envOf, withoutChange } from './change/common.ts';
import { rollingPoll, rollingResume, rollingRollbackNext, rollingRollbackPoll, rollingStart } from './change/rolling-update.ts';
import { blueGreenPoll, blueGreenResume, blueGreenRollbackPoll, blueGreenRollbackStart, blueGreenStart } from './change/blue-green.ts';

// ---------------------------------------------------------------------------------------------
// The driver's four steps

/** The working state of a rollback: the recorded change, or (a start that failed before recording one) one naming what it would have made. */
function workingOf(ctx: OperationContext, raw: DriverState, change: PackageChange): Working {
  const state = stateOf(ctx, raw);
  const recorded = changeOf(raw);
  if (recorded && recorded.vnfPkgId === change.vnfPkgId && recorded.upgradeType === change.upgradeType) return { ...state, change: recorded };
  return {
    ...state,
    change: {
      upgradeType: change.upgradeType,
      vnfPkgId: change.vnfPkgId,
      phase: 'images',
      newImages: [],
      vdus: [],
      owners: [],
      targets: [],
      ...(change.upgradeType === 'BlueGreen' ? { newStackName: blueGreenStackNameOf(ctx, change.vnfPkgId, state.stackName) } : {}),
    },
  };
}

/** Goes on with a change from where a failed attempt stopped: the failed step is issued again. */
async function resume(env: Env, working: Working): Promise<void> {
  delete working.change.retry;
  delete working.change.rollback;
  await (working.change.upgradeType === 'RollingUpdate' ? rollingResume(env, working) : blueGreenResume(env, working));
}

export async function changeStart(ctx: OperationContext, raw: DriverState, change: PackageChange): Promise<DriverState> {
  const env = envOf(ctx, change);
  const recorded = changeOf(raw);
  if (recorded && recorded.vnfPkgId === change.vnfPkgId && recorded.upgradeType === change.upgradeType) {
    // A retry of this change: go on from where it stopped.
    const working: Working = { ...stateOf(ctx, raw), change: recorded };
    await resume(env, working);
    return { ...working };
  }
  const state = withoutChange(stateOf(ctx, raw));
  return { ...(await (change.upgradeType === 'RollingUpdate' ? rollingStart(env, state) : blueGreenStart(env, state))) };
}

export async function changePoll(ctx: OperationContext, raw: DriverState, change: PackageChange): Promise<Progress> {
  const recorded = changeOf(raw);
  if (!recorded || recorded.vnfPkgId !== change.vnfPkgId || recorded.upgradeType !== change.upgradeType) {
    return { status: 'FAILED', state: raw, reason: `the driver state records no ${change.upgradeType} change to VNF package ${change.vnfPkgId} to go on with` };
  }
  const env = envOf(ctx, change);
  const working: Working = { ...stateOf(ctx, raw), change: recorded };
  if (recorded.retry) {
    await resume(env, working);
    return { status: 'IN_PROGRESS', state: { ...working } };
  }
  return recorded.upgradeType === 'RollingUpdate' ? rollingPoll(env, working) : blueGreenPoll(env, working);
}

export async function changeRollbackStart(ctx: OperationContext, raw: DriverState, change: PackageChange): Promise<DriverState> {
  const env = envOf(ctx, change);
  const working = workingOf(ctx, raw, change);
  delete working.change.retry;
  working.change.rollback = { step: 'vnfcs', index: 0 };
  log.info('openstack: rolling back a package change', {
    vnfInstanceId: ctx.vnfInstanceId,
    vnfPkgId: change.vnfPkgId,
    upgradeType: change.upgradeType,
    phase: working.change.phase,
  });
  if (working.change.upgradeType === 'RollingUpdate') await rollingRollbackNext(env, working);
  else await blueGreenRollbackStart(env, working);
  return { ...working };
}

export async function changeRollbackPoll(ctx: OperationContext, raw: DriverState, change: PackageChange): Promise<Progress> {
  const env = envOf(ctx, change);
  const working = workingOf(ctx, raw, change);
  return working.change.upgradeType === 'RollingUpdate' ? rollingRollbackPoll(env, working) : blueGreenRollbackPoll(env, working);
}
