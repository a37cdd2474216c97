// What the OpenStack driver carries between steps and the Heat stack it names: the state schema,
// the stack's deterministic name, its `nfv` parameter rebuilt from the same inputs every time, its
// creation, and where a stack action stands. Shared by instantiate, scale/heal, terminate and the
// package change.
import * as z from 'zod';
import { log } from '#lib/log.ts';
import type { DriverState, GrantDecision, OperationContext, Progress } from '#lib/vim/driver.ts';
import { VimError } from './errors.ts';
import type { HeatClient, HeatStack } from './heat.ts';
import { buildNfv, capacitiesOf, flavourOf, loadBaseHot, parseTemplate, vduZone, type BaseHot } from './hot.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import { imageRecord, type ImageRecord } from './images.ts';

/** Deep enough for a member of an AutoScalingGroup (depth 2) whose template nests further, up to Heat's own default limit. */
export const RESOURCE_NESTED_DEPTH = 5;

/** What of the instantiate grant the `nfv` parameter depends on, so a later update rebuilds it unchanged. */
export const grantChoices = z.object({
  flavours: z.record(z.string(), z.string()).optional(),
  zones: z.array(z.object({ id: z.string(), zoneId: z.string() })).optional(),
  vduZones: z.record(z.string(), z.string()).optional(),
});
export type GrantChoices = z.infer<typeof grantChoices>;

const stateSchema = z
  .object({
    stackName: z.string().optional(),
    stackId: z.string().optional(),
    images: z.array(imageRecord).default([]),
    capacities: z.record(z.string(), z.number().int().nonnegative()).optional(),
    instantiateGrant: grantChoices.optional(),
  })
  .passthrough();

/** What instantiate, scale, heal, terminate and a package change carry between steps. */
export interface OpenStackState {
  stackName: string;
  stackId?: string;
  images: ImageRecord[];
  /** desired_capacity per VDU the stack was last given. */
  capacities?: Record<string, number>;
  instantiateGrant?: GrantChoices;
  [key: string]: unknown;
}

export const stackNameOf = (vnfInstanceId: string): string => `vnf-${vnfInstanceId}`;

export function stateOf(ctx: Pick<OperationContext, 'vnfInstanceId'>, state: DriverState): OpenStackState {
  const parsed = stateSchema.safeParse(state ?? {});
  const data = parsed.success ? parsed.data : { images: [] };
  return { ...data, stackName: data.stackName ?? stackNameOf(ctx.vnfInstanceId), images: data.images ?? [] };
}

/** Name/id when the id is known: Heat then answers without the by-name redirect, also after deletion. */
export const stackRef = (state: Pick<OpenStackState, 'stackName' | 'stackId'>): string =>
  state.stackId ? `${state.stackName}/${state.stackId}` : state.stackName;

export const grantChoicesOf = (grant: GrantDecision): GrantChoices => ({
  ...(grant.flavours ? { flavours: grant.flavours } : {}),
  ...(grant.zones ? { zones: grant.zones.map(({ id, zoneId }) => ({ id, zoneId })) } : {}),
  ...(grant.vduZones && Object.keys(grant.vduZones).length ? { vduZones: { ...grant.vduZones } } : {}),
});

/**
 * The grant choices a scale rebuilds `nfv` with: the VNF's own, so its VDUs stay where they are,
 * and for a VDU with no VNFC yet the zone the scale's grant places its new VNFCs in. A VDU's VNFCs
 * share one zone (one `locationConstraints` per VDU, as the scaling group's member definition): a
 * grant that places new VNFCs of a VDU in another zone than the one its VNFCs are in is refused
 * before the stack is touched, as Heat would replace the existing servers to move them.
 */
export function scaleChoices(placed: GrantChoices, grant: GrantDecision, capacities: Record<string, number>, defaultZone?: string): GrantChoices {
  const vduZones = { ...(placed.vduZones ?? {}) };
  for (const [vduId, zoneId] of Object.entries(grant.vduZones ?? {})) {
    const current = vduZone(placed, vduId, defaultZone);
    if (current === zoneId) continue;
    if ((capacities[vduId] ?? 0) > 0) {
      throw new UnprocessableEntityError(
        `the grant places the new VNFCs of ${vduId} in zone ${zoneId}, but its VNFCs are in zone ${current} and the Heat template places all VNFCs of a VDU in one zone`,
      );
    }
    Object.defineProperty(vduZones, vduId, { value: zoneId, enumerable: true, writable: true, configurable: true });
  }
  return { ...placed, ...(Object.keys(vduZones).length ? { vduZones } : {}) };
}

/** The inputs of a stack's `nfv` besides the state: the package (VNFD, flavour), the instantiate request and the VIM. */
export type NfvContext = Pick<OperationContext, 'vnfd' | 'flavourId' | 'instantiationLevelId' | 'instantiateRequest' | 'vim'>;

/** The VIM's own zone for servers the grant places nowhere (its `extra.availabilityZone`). */
export const defaultZoneOf = (ctx: Pick<OperationContext, 'vim'>): string | undefined =>
  typeof ctx.vim.extra?.availabilityZone === 'string' ? ctx.vim.extra.availabilityZone : undefined;

/** The stack's `nfv` parameter, from the instantiate request and grant, the images in the state and the capacities a scale set. */
export function nfvOf(ctx: NfvContext, state: Pick<OpenStackState, 'images' | 'capacities'>, hot: BaseHot, grant: GrantChoices): Record<string, unknown> {
  return buildNfv({
    flavour: flavourOf(ctx.vnfd, ctx.flavourId),
    ...(ctx.instantiationLevelId !== undefined ? { instantiationLevelId: ctx.instantiationLevelId } : {}),
    request: ctx.instantiateRequest,
    grant,
    images: Object.fromEntries(state.images.map((image) => [image.imageId, image.id])),
    template: parseTemplate(hot),
    ...(defaultZoneOf(ctx) !== undefined ? { defaultZone: defaultZoneOf(ctx) } : {}),
    ...(state.capacities ? { capacities: state.capacities } : {}),
  });
}

/** Creates the stack `state.stackName` from the package of `ctx`; answers what the state must record of it. */
export async function createStack(
  ctx: NfvContext & Pick<OperationContext, 'vnfInstanceId' | 'files' | 'grant'>,
  heat: HeatClient,
  state: OpenStackState,
): Promise<Pick<OpenStackState, 'stackId' | 'capacities' | 'instantiateGrant'>> {
  const hot = await loadBaseHot(ctx.files, ctx.flavourId);
  const instantiateGrant = grantChoicesOf(ctx.grant);
  const nfv = nfvOf(ctx, state, hot, instantiateGrant);
  const recorded = { capacities: capacitiesOf(nfv), instantiateGrant };
  log.info('openstack: creating stack', {
    vnfInstanceId: ctx.vnfInstanceId,
    stackName: state.stackName,
    template: hot.templatePath,
    files: Object.keys(hot.files),
  });
  const created = await heat.createStack({ stackName: state.stackName, template: hot.template, files: hot.files, parameters: { nfv }, disableRollback: true });
  if (created) return { stackId: created.id, ...recorded };
  // 409: a retried step already created it.
  const existing = await heat.getStack(state.stackName);
  if (!existing) throw new VimError('heat', `creating stack ${state.stackName}: heat answered 409 but has no stack of that name`);
  return { stackId: existing.id, ...recorded };
}

export type StackActionStatus = { status: 'DONE' } | { status: 'IN_PROGRESS' } | { status: 'FAILED'; reason: string };

/** Where a stack action stands: done, running, or failed with Heat's reason verbatim. A missing stack has failed (except a deletion). */
export function stackActionStatus(stack: HeatStack | undefined, action: 'CREATE' | 'UPDATE' | 'DELETE', ref: string): StackActionStatus {
  if (!stack) return action === 'DELETE' ? { status: 'DONE' } : { status: 'FAILED', reason: `stack ${ref} no longer exists` };
  switch (stack.stack_status) {
    case `${action}_COMPLETE`:
      return { status: 'DONE' };
    case `${action}_FAILED`:
      return { status: 'FAILED', reason: stack.stack_status_reason ?? stack.stack_status };
    default:
      return stack.stack_status.endsWith('_IN_PROGRESS')
        ? { status: 'IN_PROGRESS' }
        : {
            status: 'FAILED',
            reason: `stack ${stack.stack_name} is ${stack.stack_status}${stack.stack_status_reason ? `: ${stack.stack_status_reason}` : ''}`,
          };
  }
}

/**
 * Where the deletion of a stack stands. A stack not yet being deleted is asked again: Heat had not
 * taken the delete, or lost it, and deletion is idempotent. A missing stack is deleted.
 */
export async function stackDeletion(heat: HeatClient, ref: string): Promise<StackActionStatus> {
  const stack = await heat.getStack(ref);
  if (stack && !stack.stack_status.startsWith('DELETE_')) {
    await heat.deleteStack(ref);
    return { status: 'IN_PROGRESS' };
  }
  return stackActionStatus(stack, 'DELETE', ref);
}

/** stackActionStatus as a step's Progress, carrying the state. */
export function stackProgress(stack: HeatStack | undefined, action: 'CREATE' | 'UPDATE', state: OpenStackState): Progress {
  const carried = { ...state };
  const status = stackActionStatus(stack, action, stackRef(state));
  return status.status === 'FAILED' ? { status: 'FAILED', state: carried, reason: status.reason } : { status: status.status, state: carried };
}
