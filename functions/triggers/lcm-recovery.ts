// Recovery of LCM operations and packages that no run drives any more. Two triggers: EventBridge's
// "Step Functions Execution Status Change" (FAILED, TIMED_OUT, ABORTED) of the LCM state machines
// moves the op occ its dead execution left in flight to a defined state; the reconciliation
// schedule (and the local runtime at every start) finds what such an event never reached, and
// packages whose upload or onboarding died. Invoked once with {"backfillListKeys": true} after an
// upgrade that added tenant-scoped list indexes, it writes their keys on the records from before.
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import type { EventBridgeEvent } from 'aws-lambda';
import { recoveryDeps } from '#lib/deps.ts';
import { reconcile, recoverDeadExecution, type DeadExecution, type ReconcileOptions, type ReconcileReport } from '#lib/lcm/recovery.ts';
import { instrumented } from '#lib/metrics.ts';
import { backfillOpOccListKeys } from '#lib/store/op-occs.ts';
import { backfillVnfInstanceListKeys } from '#lib/store/vnf-instances.ts';
import { backfillVnfPackageListKeys } from '#lib/store/packages.ts';

export type RecoveryEvent =
  | EventBridgeEvent<'Step Functions Execution Status Change', DeadExecution>
  | { reconcile: ReconcileOptions }
  | { backfillListKeys: true };

type BackfillReport = { backfilled: { vnfInstances: number; vnfLcmOpOccs: number; vnfPackages: number } };

const handle = async (event: RecoveryEvent): Promise<{ result: string } | ReconcileReport | BackfillReport> => {
  if ('reconcile' in event) return reconcile(recoveryDeps(), event.reconcile);
  if ('backfillListKeys' in event)
    return {
      backfilled: {
        vnfInstances: await backfillVnfInstanceListKeys(),
        vnfLcmOpOccs: await backfillOpOccListKeys(),
        vnfPackages: await backfillVnfPackageListKeys(),
      },
    };
  return { result: await recoverDeadExecution(recoveryDeps(), event.detail) };
};

export const handler = instrumented(handle);
