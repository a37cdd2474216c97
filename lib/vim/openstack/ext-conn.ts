// CHANGE_EXT_CONN on OpenStack, as Tacker v2 does it: the stack's `nfv` parameter is rebuilt with
// the new external VLs in place of the old (network, subnet and fixed IPs of each external CP), and
// the stack is updated. Heat replaces a port whose network changes (and gives the server the new
// one) and updates a port's fixed IPs in place, so the servers stay. A rollback is the same update
// back to the external VLs the instance had. Capacities and the instantiate grant's choices come
// from the driver state, so nothing else of the stack changes.
import { log } from '#lib/log.ts';
import type { DriverState, ExtConnChange, ExternalConnectivity, OperationContext, Progress } from '#lib/vim/driver.ts';
import { VimError } from './errors.ts';
import { HeatClient } from './heat.ts';
import { loadBaseHot, requestOf } from './hot.ts';
import { OpenStackSession } from './keystone.ts';
import { grantChoicesOf, nfvOf, stackProgress, stackRef, stateOf } from './state.ts';

/** The context of the VNF as it is to be connected: its instantiate request with the new external VLs. */
export function reconnected(ctx: OperationContext, change: ExtConnChange): OperationContext {
  return { ...ctx, instantiateRequest: { ...ctx.instantiateRequest, extVirtualLinks: change.extVirtualLinks } };
}

async function start(ctx: OperationContext, raw: DriverState, change: ExtConnChange): Promise<DriverState> {
  const state = stateOf(ctx, raw);
  const next = reconnected(ctx, change);
  // A request the stack cannot be built from shows before anything changes.
  requestOf(next.instantiateRequest);
  const heat = new HeatClient(new OpenStackSession(ctx.vim));
  const stack = await heat.getStack(stackRef(state));
  if (!stack || stack.stack_status.startsWith('DELETE_'))
    throw new VimError('heat', `the stack of VNF instance ${ctx.vnfInstanceId} (${stackRef(state)}) does not exist`);
  state.stackId = stack.id;
  const nfv = nfvOf(next, state, await loadBaseHot(ctx.files, ctx.flavourId), state.instantiateGrant ?? grantChoicesOf(ctx.grant));
  log.info('openstack: changing external connectivity', {
    vnfInstanceId: ctx.vnfInstanceId,
    stack: stackRef(state),
    cpdIds: change.cpdIds,
    networks: change.extVirtualLinks.map((link) => link.resourceId),
  });
  // PATCH keeps the template and every other parameter; rollback stays the LCM engine's decision.
  await heat.patchStack(stackRef(state), { parameters: { nfv }, disableRollback: true });
  return { ...state };
}

async function poll(ctx: OperationContext, raw: DriverState): Promise<Progress> {
  const state = stateOf(ctx, raw);
  return stackProgress(await new HeatClient(new OpenStackSession(ctx.vim)).getStack(stackRef(state)), 'UPDATE', state);
}

export const openStackExternalConnectivity: ExternalConnectivity = { start, poll };
