// What every simulated service shares: ids and timestamps in OpenStack's spellings, the API error
// every module throws (each service renders it in its own wire shape), and the scheduler that owns
// all asynchronous work, so delays scale with timeScale and "settled" can be answered exactly.
import { randomBytes, randomUUID } from 'node:crypto';
import type { FaultRegistry } from './faults.ts';
import type { Keystone } from './keystone.ts';
import type { Glance } from './glance.ts';
import type { Nova } from './nova.ts';
import type { Neutron } from './neutron.ts';
import type { Cinder } from './cinder.ts';
import type { HeatEngine } from './heat/engine.ts';

// ---------------------------------------------------------------------------------------------
// Ids and times.

export const uuid = (): string => randomUUID();
/** Keystone's ids: 32 hex digits, no dashes. */
export const hexId = (): string => randomUUID().replaceAll('-', '');
export const requestId = (): string => `req-${randomUUID()}`;

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
/** Heat's short_id: 12 lowercase base32 characters, used in nested stack and group member names. */
export function shortId(): string {
  const bytes = randomBytes(12);
  let out = '';
  for (const byte of bytes) out += BASE32[byte % 32];
  return out;
}

/** A MAC address from the OpenStack (fa:16:3e) prefix Neutron uses. */
export function macAddress(): string {
  const bytes = randomBytes(3);
  return `fa:16:3e:${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join(':')}`;
}

/** Nova, Neutron, Glance and Heat: 2024-01-02T03:04:05Z. */
export const isoSeconds = (t: number): string => new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** Keystone: microseconds and Z. */
export const isoMicros = (t: number): string => new Date(t).toISOString().replace(/Z$/, '000Z');
/** Cinder: microseconds, no zone. */
export const isoCinder = (t: number): string => new Date(t).toISOString().replace(/Z$/, '000');

// ---------------------------------------------------------------------------------------------
// Errors.

/**
 * An API failure. `type` is the service's own name for it (Heat exception class, Neutron error
 * type, Nova fault key is derived from the status); each service module renders it.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type?: string,
  ) {
    super(message);
    this.name = type ?? `Http${status}`;
  }
}

export const badRequest = (message: string, type?: string): ApiError => new ApiError(400, message, type);

// ---------------------------------------------------------------------------------------------
// Scheduler: scaled delays, tracked work, and the settled signal.

/** Thrown into work still waiting when the simulator closes; background tasks swallow it. */
export class SimulatorClosed extends Error {
  constructor() {
    super('the OpenStack simulator is closed');
  }
}

/** Thrown into a wait whose operation was abandoned (a stack action cancelled or timed out). */
export class Aborted extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

interface Waiter {
  check: () => boolean;
  resolve: () => void;
  reject: (err: unknown) => void;
  signal?: AbortSignal | undefined;
  onAbort?: () => void;
}

/**
 * Runs all simulated asynchronous work. `busy` counts tracked work; settled() resolves when it is
 * zero (re-checked on a later macrotask so a chain between two awaits is not taken for idle).
 * Waiting for something outside the simulator (a deployment signal) is deliberately untracked.
 */
export class Scheduler {
  #busy = 0;
  #idleWaiters: Array<() => void> = [];
  #timers = new Map<NodeJS.Timeout, (err: unknown) => void>();
  #waiters = new Set<Waiter>();
  #closed = false;
  #checkQueued = false;

  constructor(
    readonly timeScale: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  get closed(): boolean {
    return this.#closed;
  }

  /** Sleeps `ms` × timeScale. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.sleepExactly(ms * this.timeScale, signal);
  }

  /** Sleeps `ms` as given (explicit delays such as a "slow" fault are not scaled). */
  sleepExactly(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.#closed) return Promise.reject(new SimulatorClosed());
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        this.#timers.delete(timer);
        reject(new Aborted(abortReason(signal)));
      };
      const timer = setTimeout(
        () => {
          this.#timers.delete(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      this.#timers.set(timer, reject);
      if (signal) {
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }
    });
  }

  /** Runs `fn` as tracked work. */
  async track<T>(fn: () => Promise<T>): Promise<T> {
    this.#busy++;
    try {
      return await fn();
    } finally {
      this.#leave();
    }
  }

  /** Starts tracked background work; its failure is reported, not thrown. */
  spawn(fn: () => Promise<void>): void {
    this.track(fn).catch((err: unknown) => {
      if (err instanceof SimulatorClosed || err instanceof Aborted) return;
      this.onError(err);
    });
  }

  /** Inside tracked work: waits for something only the outside world can cause, without counting as busy. */
  async external<T>(promise: Promise<T>): Promise<T> {
    this.#leave();
    try {
      return await promise;
    } finally {
      this.#busy++;
    }
  }

  /** Resolves once `check()` holds, re-evaluated whenever changed() is called. */
  until(check: () => boolean, signal?: AbortSignal): Promise<void> {
    if (check()) return Promise.resolve();
    if (this.#closed) return Promise.reject(new SimulatorClosed());
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { check, resolve, reject, signal };
      if (signal) {
        if (signal.aborted) {
          reject(new Aborted(abortReason(signal)));
          return;
        }
        waiter.onAbort = () => {
          this.#waiters.delete(waiter);
          reject(new Aborted(abortReason(signal)));
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.#waiters.add(waiter);
    });
  }

  /** Something observable changed: wake the waiters whose condition now holds. */
  changed(): void {
    for (const waiter of [...this.#waiters]) {
      let done = false;
      try {
        done = waiter.check();
      } catch (err) {
        this.#waiters.delete(waiter);
        if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
        waiter.reject(err);
        continue;
      }
      if (done) {
        this.#waiters.delete(waiter);
        if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
        waiter.resolve();
      }
    }
  }

  /** An untracked timer (timeouts must not hold settled() back); returns its cancel function. */
  timer(ms: number, fn: () => void): () => void {
    if (this.#closed) return () => {};
    const timer = setTimeout(
      () => {
        this.#timers.delete(timer);
        fn();
      },
      Math.max(0, ms),
    );
    this.#timers.set(timer, () => {});
    return () => {
      clearTimeout(timer);
      this.#timers.delete(timer);
    };
  }

  settled(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#idleWaiters.push(resolve);
      this.#queueIdleCheck();
    });
  }

  get busy(): number {
    return this.#busy;
  }

  close(): void {
    this.#closed = true;
    for (const [timer, reject] of this.#timers) {
      clearTimeout(timer);
      reject(new SimulatorClosed());
    }
    this.#timers.clear();
    for (const waiter of this.#waiters) waiter.reject(new SimulatorClosed());
    this.#waiters.clear();
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  #leave(): void {
    this.#busy--;
    if (this.#busy === 0) this.#queueIdleCheck();
  }

  #queueIdleCheck(): void {
    if (this.#checkQueued) return;
    this.#checkQueued = true;
    // Two macrotask hops: work resumed by a resolved promise re-registers itself before then.
    setImmediate(() =>
      setImmediate(() => {
        this.#checkQueued = false;
        if ((this.#busy === 0 || this.#closed) && this.#idleWaiters.length > 0) {
          for (const resolve of this.#idleWaiters.splice(0)) resolve();
        }
      }),
    );
  }
}

function abortReason(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  if (reason instanceof Aborted) return reason.reason;
  if (typeof reason === 'string') return reason;
  return 'aborted';
}

// ---------------------------------------------------------------------------------------------
// Small helpers shared by the service modules (isRecord is the product's own, so both narrow JSON alike).

export { isRecord } from '#lib/json.ts';

// ---------------------------------------------------------------------------------------------
// The cloud: every service, reachable from every other (Heat drives Nova, Nova binds Neutron ports).

export interface Cloud {
  sched: Scheduler;
  faults: FaultRegistry;
  log: (line: string) => void;
  /** Where the catalog points: http://host:port (no trailing slash). */
  publicBase: string;
  region: string;
  keystone: Keystone;
  glance: Glance;
  nova: Nova;
  neutron: Neutron;
  cinder: Cinder;
  heat: HeatEngine;
}
