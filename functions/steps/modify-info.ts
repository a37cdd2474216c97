// Step Functions task of MODIFY_INFO: applies the op occ's VnfInfoModificationRequest to the VNF
// instance under its lock and returns the changedInfo to record.
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import { coreDeps } from '#lib/deps.ts';
import { applyModifyInfo } from '#lib/lcm/vnf-instances.ts';
import { NotFoundError } from '#lib/sol/errors.ts';
import { OperationCancelled } from '#lib/lcm/cancellation.ts';
import { instrumented } from '#lib/metrics.ts';

const handle = async (input: { opOccId: string }): Promise<{ changedInfo: Record<string, unknown> }> => {
  const deps = coreDeps();
  const opOcc = await deps.opOccs.get(input.opOccId);
  if (!opOcc) throw new NotFoundError(`VNF LCM operation occurrence ${input.opOccId} does not exist`);
  // Cancelled before the modification was applied: it is not applied.
  if (opOcc.isCancelPending) throw new OperationCancelled(opOcc);
  return { changedInfo: await applyModifyInfo(deps, opOcc) };
};

export const handler = instrumented(handle, (input) => ({ opOccId: input.opOccId }));
