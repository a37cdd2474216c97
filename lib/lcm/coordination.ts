// LCM coordination (ETSI GS NFV-SOL 002 clause 10, the VNFM as client): an LCM request names an
// element manager (or the VNF) in additionalParams.lcmCoordination and the coordination actions to
// ask it for, at the start of the operation (before the VIM is touched), at its end (the VIM work
// done, before the operation completes) or, for CHANGE_VNFPKG, for each batch of VNFCs the driver
// moves. A step never waits for the EM: it asks (or reads the result it was told to read later),
// records where the coordination stands on the op occ, and answers IN_PROGRESS until the time the
// EM asked for, like a VIM poll. CONTINUE lets the operation go on; ABORT and CANCELLED fail it to
// FAILED_TEMP (SOL002 LcmCoordResultType) with the EM's reason, as does a coordination that has no
// result within the request's time limit. Every coordination is listed in the op occ's
// lcmCoordinations, every 503 in rejectedLcmCoordinations (SOL003 V3.7.1 5.5.2.13).
import * as z from 'zod';
import { EgressDeniedError, egressPolicyFromEnv, parseEgressUrl, type EgressPolicy } from '#lib/egress.ts';
import { isRecord } from '#lib/json.ts';
import { log } from '#lib/log.ts';
import { ProblemError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { CoordinationProgress, LcmCoordinationInfo, LcmOperationType, RejectedLcmCoordination, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { subscriptionAuthentication } from '#lib/notify/model.ts';
import { TokenError } from '#lib/notify/callback.ts';
import { chooseAuth } from '#lib/notify/subscriptions.ts';
import {
  cancelCoordination,
  coordinationIdOf,
  DEFAULT_RETRY_AFTER_MS,
  readCoordination,
  requestCoordination,
  type CoordinationAnswer,
  type CoordinationEndpoint,
  type LcmCoord,
  type LcmCoordRequest,
} from '#lib/coordination/client.ts';
import { updateOpOcc } from './op-occs.ts';
import { scriptRequest } from './scripts.ts';

/** Where in an operation a coordination action is asked for. */
export type CoordinationPlace = 'start' | 'end' | 'vnfc';

const coordinationAction = z
  .object({
    /** The coordinationActionName (SOL002: declared in the VNFD; the EM knows it). */
    name: z.string().min(1).max(255),
    at: z.enum(['start', 'end', 'vnfc']).default('start'),
    inputParams: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

/** additionalParams.lcmCoordination of an LCM request. */
export const lcmCoordinationParams = z
  .object({
    /** The API root of the EM's VNF LCM Coordination interface (the client adds /lcmcoord/v1/coordinations). */
    endpoint: z.url({ protocol: /^https?$/ }).max(2048),
    /** SOL003 lcmCoordinations.endpointType: MGMT (an EM or another management system) or VNF. */
    endpointType: z.enum(['MGMT', 'VNF']).default('MGMT'),
    /** How the VNFM authenticates at the EM (SOL013 SubscriptionAuthentication); kept apart with the request's secrets, never returned. */
    authentication: subscriptionAuthentication.optional(),
    actions: z.array(coordinationAction).min(1).max(16),
    /** A coordination without a result this long after it was first asked for fails the operation. */
    timeoutSeconds: z.number().int().min(1).max(86_400).default(600),
  })
  .strict();
export type LcmCoordinationPlan = z.infer<typeof lcmCoordinationParams>;

/**
 * The coordination an LCM request asks for (undefined: none), checked when the request arrives
 * (422 for a request that cannot work). `operation` refuses per-VNFC actions where no driver asks
 * for VNFC coordination.
 */
export function coordinationPlanOf(additionalParams: unknown, operation?: LcmOperationType): LcmCoordinationPlan | undefined {
  const value = isRecord(additionalParams) ? additionalParams.lcmCoordination : undefined;
  if (value === undefined) return undefined;
  const parsed = lcmCoordinationParams.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UnprocessableEntityError(
      `additionalParams.lcmCoordination${issue?.path.length ? `.${issue.path.join('.')}` : ''}: ${issue?.message ?? 'invalid'}`,
    );
  }
  const plan = parsed.data;
  if (operation && operation !== 'CHANGE_VNFPKG' && plan.actions.some((action) => action.at === 'vnfc'))
    throw new UnprocessableEntityError('additionalParams.lcmCoordination: actions "at": "vnfc" are asked for by CHANGE_VNFPKG only');
  try {
    parseEgressUrl(plan.endpoint);
  } catch (error) {
    throw new UnprocessableEntityError(`additionalParams.lcmCoordination.endpoint: ${(error as EgressDeniedError).reason}`);
  }
  if (plan.authentication) chooseAuth(plan.authentication);
  return plan;
}

/** The coordination a running op occ asks for, as recorded (its authentication is not in the record). */
export function recordedPlanOf(opOcc: VnfLcmOpOccRecord): LcmCoordinationPlan | undefined {
  const additional = opOcc.operationParams?.additionalParams;
  if (!isRecord(additional) || additional.lcmCoordination === undefined) return undefined;
  return lcmCoordinationParams.parse(additional.lcmCoordination);
}

/** The EM said ABORT, or the coordination was CANCELLED: the operation fails (SOL002 LcmCoordResultType). */
export class LcmCoordinationAborted extends ProblemError {
  constructor(detail: string) {
    super(409, 'LCM coordination aborted', detail);
    // Set, not inherited from the class: bundles minify class names, and the op occ's error is titled by it.
    this.name = 'LcmCoordinationAborted';
  }
}

/** The coordination could not be had: the EM refused the request, could not be reached, or gave no result in time. */
export class LcmCoordinationFailed extends ProblemError {
  constructor(detail: string) {
    super(502, 'LCM coordination failed', detail);
    this.name = 'LcmCoordinationFailed';
  }
}

/** What a step that waits for a coordination answers: in progress, polled again at `notBefore`. */
export interface Waiting {
  status: 'IN_PROGRESS';
  waitUntil: string;
  polls: number;
}

export interface CoordinationOptions {
  egress?: EgressPolicy;
  /** The clock (tests hand in their own). */
  now?: () => number;
}

const who = (plan: LcmCoordinationPlan) => (plan.endpointType === 'VNF' ? 'the VNF' : 'the EM');

/**
 * Where an op occ's coordinations stand, read once per step and written back after every change;
 * the step's own writes to the op occ touch none of these attributes.
 */
export class CoordinationLedger {
  private progress: CoordinationProgress;
  private entries: LcmCoordinationInfo[];
  private rejected: RejectedLcmCoordination[];
  private endpoint?: CoordinationEndpoint;
  private readonly now: () => number;
  private readonly egress: EgressPolicy;

  constructor(
    private readonly deps: CoreDeps,
    private readonly opOcc: VnfLcmOpOccRecord,
    readonly plan: LcmCoordinationPlan,
    options: CoordinationOptions = {},
  ) {
    this.progress = structuredClone(opOcc.coordination ?? { done: [] });
    this.entries = structuredClone(opOcc.lcmCoordinations ?? []);
    this.rejected = structuredClone(opOcc.rejectedLcmCoordinations ?? []);
    this.now = options.now ?? Date.now;
    this.egress = options.egress ?? egressPolicyFromEnv();
  }

  private key(mark: string): string {
    return `${this.opOcc.attempts ?? 1}/${mark}`;
  }

  /** Whether this attempt has passed `mark` (a coordination key or an engine mark such as "started"). */
  has(mark: string): boolean {
    return this.progress.done.includes(this.key(mark));
  }

  async mark(mark: string): Promise<void> {
    if (this.has(mark)) return;
    this.progress.done.push(this.key(mark));
    await this.save();
  }

  /** A coordination is under way (asked for, no result yet). */
  get pending(): boolean {
    return this.progress.pending !== undefined;
  }

  hasActionsAt(place: CoordinationPlace): boolean {
    return this.plan.actions.some((action) => action.at === place);
  }

  /**
   * Runs the coordinations of `place` in the order the request lists them: undefined once all have
   * finished with CONTINUE; a Waiting while one runs; throws when one ends otherwise. `batch` tells
   * apart the VNFC batches of a CHANGE_VNFPKG, `input` adds to their inputParams.
   */
  async coordinate(place: CoordinationPlace, polls: number, batch?: string, input?: Record<string, unknown>): Promise<Waiting | undefined> {
    for (const [index, action] of this.plan.actions.entries()) {
      if (action.at !== place) continue;
      const mark = `${place}/${index}${batch ? `/${batch}` : ''}`;
      if (this.has(mark)) continue;
      const waiting = await this.advance(mark, action, polls, input);
      if (waiting) return waiting;
    }
    return undefined;
  }

  /** Asks the EM to cancel the coordination under way (a cancelled operation takes no further step); its entry ends now. */
  async cancelPending(): Promise<void> {
    const pending = this.progress.pending;
    if (!pending) return;
    if (pending.location) {
      await cancelCoordination(await this.endpointOf(), pending.location, { policy: this.egress, now: this.now }).catch((error: unknown) =>
        log.warn('could not ask to cancel an LCM coordination', { opOccId: this.opOcc.id, error }),
      );
    }
    this.end(pending.entry);
    delete this.progress.pending;
    await this.save();
  }

  private async advance(
    mark: string,
    action: LcmCoordinationPlan['actions'][number],
    polls: number,
    input?: Record<string, unknown>,
  ): Promise<Waiting | undefined> {
    const key = this.key(mark);
    // One left running by an attempt that was stopped (a FORCEFUL cancel) is cancelled at the EM, not left behind.
    if (this.progress.pending && this.progress.pending.key !== key) await this.cancelPending();
    const now = this.now();
    const pending = this.progress.pending?.key === key ? this.progress.pending : undefined;
    if (pending && now < Date.parse(pending.notBefore)) return { status: 'IN_PROGRESS', waitUntil: pending.notBefore, polls: polls + 1 };
    const deadline = pending ? Date.parse(pending.firstAskedAt) + this.plan.timeoutSeconds * 1000 : now + this.plan.timeoutSeconds * 1000;
    if (pending && now >= deadline) {
      if (pending.location) await this.cancelPending();
      else {
        delete this.progress.pending;
        await this.save();
      }
      throw new LcmCoordinationFailed(`${who(this.plan)} gave no result for the coordination action ${action.name} within ${this.plan.timeoutSeconds} s`);
    }
    const answer = await this.exchange(action, pending?.location, input);
    const at = new Date(now).toISOString();
    const later = (ms: number) => new Date(Math.min(now + ms, deadline)).toISOString();
    switch (answer.kind) {
      case 'finished':
        return this.finished(key, action.name, answer.coordination, pending?.entry, at);
      case 'running': {
        const entry =
          pending?.entry ??
          this.entries.push({
            id: coordinationIdOf(answer.location),
            coordinationActionName: action.name,
            startTime: at,
            endpointType: this.plan.endpointType,
          }) - 1;
        const current = this.entries[entry];
        if (current) {
          if (answer.retryAfterMs !== undefined) current.delay = new Date(now + answer.retryAfterMs).toISOString();
          else delete current.delay;
        }
        const notBefore = later(answer.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS);
        this.progress.pending = { key, firstAskedAt: pending?.firstAskedAt ?? at, notBefore, location: answer.location, entry };
        await this.save();
        return { status: 'IN_PROGRESS', waitUntil: notBefore, polls: polls + 1 };
      }
      case 'rejected': {
        const delay = new Date(now + answer.retryAfterMs).toISOString();
        this.rejected.push({ coordinationActionName: action.name, rejectionTime: at, delay, endpointType: this.plan.endpointType });
        const notBefore = later(answer.retryAfterMs);
        this.progress.pending = { key, firstAskedAt: pending?.firstAskedAt ?? at, notBefore };
        await this.save();
        log.info('LCM coordination rejected for now (503)', { opOccId: this.opOcc.id, action: action.name, retryAfterMs: answer.retryAfterMs });
        return { status: 'IN_PROGRESS', waitUntil: notBefore, polls: polls + 1 };
      }
      case 'failed': {
        if (answer.transient && pending?.location) {
          const notBefore = later(DEFAULT_RETRY_AFTER_MS);
          this.progress.pending = { ...pending, notBefore };
          await this.save();
          log.warn('reading an LCM coordination failed; reading it again later', {
            opOcc: this.opOcc.id,
            action: action.name,
            status: answer.status,
            detail: answer.detail,
          });
          return { status: 'IN_PROGRESS', waitUntil: notBefore, polls: polls + 1 };
        }
        this.end(pending?.entry);
        delete this.progress.pending;
        await this.save();
        throw new LcmCoordinationFailed(
          `${who(this.plan)} refused the coordination action ${action.name}${answer.status ? ` (HTTP ${answer.status})` : ''}: ${answer.detail}`,
        );
      }
    }
  }

  /** One exchange with the EM; a failure to reach it is an answer too (transient while reading a running coordination). */
  private async exchange(
    action: LcmCoordinationPlan['actions'][number],
    location: string | undefined,
    input?: Record<string, unknown>,
  ): Promise<CoordinationAnswer> {
    const endpoint = await this.endpointOf();
    const options = { policy: this.egress, now: this.now };
    try {
      return location ? await readCoordination(endpoint, location, options) : await requestCoordination(endpoint, this.request(action, input), options);
    } catch (error) {
      if (error instanceof EgressDeniedError)
        return { kind: 'failed', status: 0, detail: `its address is not allowed by the egress policy: ${error.reason}`, transient: false };
      if (error instanceof TokenError) return { kind: 'failed', status: 0, detail: `no OAuth 2.0 token could be obtained: ${error.message}`, transient: false };
      return { kind: 'failed', status: 0, detail: `it could not be reached: ${(error as Error).message}`, transient: true };
    }
  }

  private async finished(key: string, name: string, coordination: LcmCoord, entry: number | undefined, at: string): Promise<undefined> {
    const info: LcmCoordinationInfo = {
      ...(entry !== undefined ? this.entries[entry] : undefined),
      id: coordination.id,
      coordinationActionName: name,
      coordinationResult: coordination.coordinationResult,
      startTime: (entry !== undefined ? this.entries[entry]?.startTime : undefined) ?? at,
      endTime: at,
      endpointType: this.plan.endpointType,
    };
    delete info.delay;
    if (entry !== undefined) this.entries[entry] = info;
    else this.entries.push(info);
    delete this.progress.pending;
    if (coordination.coordinationResult === 'CONTINUE') this.progress.done.push(key);
    await this.save();
    log.info('LCM coordination finished', { opOccId: this.opOcc.id, action: name, result: coordination.coordinationResult });
    if (coordination.coordinationResult === 'CONTINUE') return undefined;
    const reason = coordination.error?.detail ?? reasonIn(coordination.outputParams) ?? 'no reason given';
    const what = coordination.coordinationResult === 'ABORT' ? 'aborted' : 'cancelled';
    throw new LcmCoordinationAborted(`${who(this.plan)} ${what} the ${this.opOcc.operation} at coordination action ${name}: ${reason}`);
  }

  private end(entry: number | undefined): void {
    const current = entry !== undefined ? this.entries[entry] : undefined;
    if (!current) return;
    current.endTime = new Date(this.now()).toISOString();
    delete current.delay;
  }

  private request(action: LcmCoordinationPlan['actions'][number], input?: Record<string, unknown>): LcmCoordRequest {
    return lcmCoordRequestOf(this.opOcc, action.name, { ...action.inputParams, ...input });
  }

  /** The EM and the credentials for it: those are read (from the request's secret parameters) only when the EM is called. */
  private async endpointOf(): Promise<CoordinationEndpoint> {
    if (this.endpoint) return this.endpoint;
    let auth: CoordinationEndpoint['auth'];
    if (this.opOcc.paramsSecret) {
      const request = await scriptRequest(this.deps, this.opOcc);
      const full = coordinationPlanOf(request.additionalParams);
      auth = full?.authentication ? chooseAuth(full.authentication) : undefined;
    }
    this.endpoint = { apiRoot: this.plan.endpoint, ...(auth ? { auth } : {}) };
    return this.endpoint;
  }

  private async save(): Promise<void> {
    await updateOpOcc(this.deps, this.opOcc, {
      coordination: this.progress,
      ...(this.entries.length ? { lcmCoordinations: this.entries } : {}),
      ...(this.rejected.length ? { rejectedLcmCoordinations: this.rejected } : {}),
    });
  }
}

/** The LcmCoordRequest skeleton of an op occ (all but coordinationActionName): what CoordinateVNF scripts get as lcmCoordRequest. */
export function lcmCoordRequestSkeleton(opOcc: VnfLcmOpOccRecord, inputParams: Record<string, unknown> = {}): Omit<LcmCoordRequest, 'coordinationActionName'> {
  // The API root the operation was requested through; else the VNFM's own (the local runtime says where it
  // listens); else (an automatic heal on AWS) the links are relative to the VNFM's API root.
  const root = `${(opOcc.apiRoot ?? process.env.VNFM_API_URL ?? '').replace(/\/+$/, '')}/vnflcm/v${opOcc.apiMajorVersion}`;
  return {
    vnfInstanceId: opOcc.vnfInstanceId,
    vnfLcmOpOccId: opOcc.id,
    lcmOperationType: opOcc.operation,
    ...(Object.keys(inputParams).length ? { inputParams } : {}),
    _links: { vnfLcmOpOcc: { href: `${root}/vnf_lcm_op_occs/${opOcc.id}` }, vnfInstance: { href: `${root}/vnf_instances/${opOcc.vnfInstanceId}` } },
  };
}

/** SOL002 10.5.2.2 LcmCoordRequest of an op occ for the coordination action `name`. */
export function lcmCoordRequestOf(opOcc: VnfLcmOpOccRecord, name: string, inputParams: Record<string, unknown> = {}): LcmCoordRequest {
  const { _links, ...skeleton } = lcmCoordRequestSkeleton(opOcc, inputParams);
  return { ...skeleton, coordinationActionName: name, _links };
}

/** A reason an EM put in outputParams (SOL002: "e.g. on the reason for the indicated coordinationResult"). */
function reasonIn(outputParams: Record<string, unknown> | undefined): string | undefined {
  const reason = outputParams?.reason ?? outputParams?.detail;
  return typeof reason === 'string' ? reason : undefined;
}
