// Recovery of LCM operations and packages that no run drives any more. Two triggers: EventBridge's
// "Step Functions Execution Status Change" (FAILED, TIMED_OUT, ABORTED) of the LCM state machines
// moves the op occ its dead execution left in flight to a defined state; the reconciliation
// schedule (and the local runtime at every start) finds what such an event never reached, and
// packages whose upload or onboarding died. Invoked once with {"backfillListKeys": true} after an
// upgrade that added tenant-scoped list indexes, it writes their keys on the records from before.
// Each reconciliation also keys the LCM and FM subscriptions from before their instance index (once
// per table: after that it reads one marker), so the notifier never needs an operator's step to
// read through it.
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import type { EventBridgeEvent } from 'aws-lambda';
import { recoveryDeps } from '#lib/deps.ts';
import { reconcile, recoverDeadExecution, type DeadExecution, type ReconcileOptions, type ReconcileReport } from '#lib/lcm/recovery.ts';
import { instrumented } from '#lib/metrics.ts';
import { log } from '#lib/log.ts';
import { backfillOpOccListKeys } from '#lib/store/op-occs.ts';
import { backfillVnfInstanceListKeys } from '#lib/store/vnf-instances.ts';
import { backfillVnfPackageListKeys } from '#lib/store/packages.ts';
import { requiredEnv } from '#lib/store/dynamo.ts';
import { keySubscriptions } from '#lib/store/subscriptions.ts';

export type RecoveryEvent =
  | EventBridgeEvent<'Step Functions Execution Status Change', DeadExecution>
  | { reconcile: ReconcileOptions }
  | { backfillListKeys: true };

type SubscriptionsKeyed = { lcmSubscriptions: number; fmSubscriptions: number };
type BackfillReport = { backfilled: { vnfInstances: number; vnfLcmOpOccs: number; vnfPackages: number } & SubscriptionsKeyed };

/** Keys the LCM and FM subscriptions from before their instance index (none once done). */
const keyAllSubscriptions = async (): Promise<SubscriptionsKeyed> => ({
  lcmSubscriptions: await keySubscriptions(requiredEnv('SUBSCRIPTIONS_TABLE')),
  fmSubscriptions: await keySubscriptions(requiredEnv('FM_SUBSCRIPTIONS_TABLE')),
});

const handle = async (event: RecoveryEvent): Promise<{ result: string } | (ReconcileReport & { subscriptionsKeyed?: SubscriptionsKeyed }) | BackfillReport> => {
  if ('reconcile' in event) {
    const report = await reconcile(recoveryDeps(), event.reconcile);
    // Until it succeeds the notifier reads every subscription of a tenant, as before the index: the next reconciliation tries again.
    const keyed = await keyAllSubscriptions().catch((error: unknown) => {
      log.warn('could not key the subscriptions from before the instance index; the next reconciliation tries again', { error });
      return undefined;
    });
    return keyed && keyed.lcmSubscriptions + keyed.fmSubscriptions > 0 ? { ...report, subscriptionsKeyed: keyed } : report;
  }
  if ('backfillListKeys' in event)
    return {
      backfilled: {
        vnfInstances: await backfillVnfInstanceListKeys(),
        vnfLcmOpOccs: await backfillOpOccListKeys(),
        vnfPackages: await backfillVnfPackageListKeys(),
        ...(await keyAllSubscriptions()),
      },
    };
  return { result: await recoverDeadExecution(recoveryDeps(), event.detail) };
};

export const handler = instrumented(handle);
