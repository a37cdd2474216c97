// Injected faults: what a test asks to go wrong next (a stack that fails, a server that cannot be
// scheduled, a service answering 5xx or slowly, a quota). Faults with a count are consumed one
// occurrence at a time, so a test can make exactly the next N calls fail.
import { z } from 'zod';
import { badRequest } from './state.ts';

export const SERVICES = ['keystone', 'glance', 'nova', 'neutron', 'cinder', 'heat'] as const;
export type ServiceName = (typeof SERVICES)[number];

const ALIASES: Record<string, ServiceName> = {
  keystone: 'keystone',
  identity: 'keystone',
  glance: 'glance',
  image: 'glance',
  nova: 'nova',
  compute: 'nova',
  neutron: 'neutron',
  network: 'neutron',
  networking: 'neutron',
  cinder: 'cinder',
  volume: 'cinder',
  volumev3: 'cinder',
  'block-storage': 'cinder',
  heat: 'heat',
  orchestration: 'heat',
};

const service = z.string().transform((value, ctx) => {
  const name = ALIASES[value.toLowerCase()];
  if (!name) {
    ctx.addIssue({ code: 'custom', message: `unknown service "${value}" (one of ${Object.keys(ALIASES).join(', ')})` });
    return z.NEVER;
  }
  return name;
});
const count = z.number().int().positive().optional();
const reason = z.string().min(1).optional();

export const quotaSchema = z
  .object({
    instances: z.number().int().min(-1).optional(),
    cores: z.number().int().min(-1).optional(),
    ram: z.number().int().min(-1).optional(),
    volumes: z.number().int().min(-1).optional(),
    gigabytes: z.number().int().min(-1).optional(),
    snapshots: z.number().int().min(-1).optional(),
    ports: z.number().int().min(-1).optional(),
  })
  .strict();
export type QuotaLimits = z.infer<typeof quotaSchema>;

export const faultSchema = z.discriminatedUnion('kind', [
  /** The next stack create (top-level) fails; its last resource fails with `reason`. */
  z.object({ kind: z.literal('stack-create-fail'), reason, count }).strict(),
  z.object({ kind: z.literal('stack-update-fail'), reason, count }).strict(),
  z.object({ kind: z.literal('stack-delete-fail'), reason, count }).strict(),
  /** The next servers go to ERROR at scheduling ("No valid host was found"). */
  z.object({ kind: z.literal('server-error'), message: reason, count }).strict(),
  /** The next volumes go to error while creating. */
  z.object({ kind: z.literal('volume-error'), count }).strict(),
  /** The next requests to a service answer 5xx; optionally only for one method or a path fragment. */
  z
    .object({
      kind: z.literal('http-5xx'),
      service,
      count,
      status: z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504)]).optional(),
      method: z.string().optional(),
      path: z.string().optional(),
    })
    .strict(),
  /** Requests to a service take `ms` longer (not scaled by timeScale); for `count` requests or until cleared. */
  z.object({ kind: z.literal('slow'), service, ms: z.number().int().min(0).max(600_000), count }).strict(),
  /** Sets project quotas (Nova instances/cores/ram, Cinder volumes/gigabytes/snapshots, Neutron ports); -1 is unlimited. */
  quotaSchema.extend({ kind: z.literal('quota') }).strict(),
]);

export type FaultSpec = z.input<typeof faultSchema>;
export type Fault = z.output<typeof faultSchema>;

export function parseFault(input: unknown): Fault {
  const parsed = faultSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw badRequest(`invalid fault: ${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'unreadable'}`);
  }
  return parsed.data;
}

type Counted = Exclude<Fault, { kind: 'quota' }>;
interface Active {
  fault: Counted;
  /** Remaining occurrences; undefined = until cleared. */
  remaining: number | undefined;
}

/** The active faults. `take` consumes one occurrence of the first matching fault. */
export class FaultRegistry {
  #active: Active[] = [];
  #onQuota: (limits: QuotaLimits) => void;

  constructor(onQuota: (limits: QuotaLimits) => void) {
    this.#onQuota = onQuota;
  }

  add(fault: Fault): void {
    if (fault.kind === 'quota') {
      const { kind: _kind, ...limits } = fault;
      this.#onQuota(limits);
      return;
    }
    const remaining = fault.count ?? (fault.kind === 'slow' ? undefined : 1);
    this.#active.push({ fault, remaining });
  }

  clear(): void {
    this.#active = [];
  }

  list(): Array<Counted & { remaining: number | null }> {
    return this.#active.map((a) => ({ ...a.fault, remaining: a.remaining ?? null }));
  }

  take<K extends Counted['kind']>(kind: K, matches: (fault: Extract<Counted, { kind: K }>) => boolean = () => true): Extract<Counted, { kind: K }> | undefined {
    for (const active of this.#active) {
      if (active.fault.kind !== kind) continue;
      const fault = active.fault as Extract<Counted, { kind: K }>;
      if (!matches(fault)) continue;
      if (active.remaining !== undefined) {
        active.remaining--;
        if (active.remaining <= 0) this.#active = this.#active.filter((a) => a !== active);
      }
      return fault;
    }
    return undefined;
  }
}
