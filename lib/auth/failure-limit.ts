// Failed client authentications counted per key (a client id, a source address) in a fixed
// window: after `maxFailures` in `windowMs` the key is refused until its window ends, so guessing
// a secret costs the guesser time and the VNFM no hashing. Successes are not counted. The table
// of counters is bounded: past `maxKeys` the oldest window goes first.

export interface FailureLimitOptions {
  maxFailures: number;
  windowMs: number;
  maxKeys?: number;
}

/** AUTH_FAILURE_LIMIT="<failures>/<seconds>" (default 10 per 60 s for a client id; a source address gets five times as many). */
export function failureLimitFromEnv(): FailureLimitOptions {
  const found = /^(\d+)\/(\d+)$/.exec(process.env.AUTH_FAILURE_LIMIT ?? '');
  return found ? { maxFailures: Number(found[1]), windowMs: Number(found[2]) * 1000 } : { maxFailures: 10, windowMs: 60_000 };
}

export class FailureLimiter {
  private readonly counters = new Map<string, { failures: number; windowEnds: number }>();
  private readonly maxKeys: number;

  constructor(private readonly options: FailureLimitOptions) {
    this.maxKeys = options.maxKeys ?? 10_000;
  }

  /** Seconds until the first of these keys that is over its limit may try again; 0 when none is. */
  retryAfterSeconds(keys: Array<[key: string, maxFailures: number]>, now = Date.now()): number {
    let wait = 0;
    for (const [key, maxFailures] of keys) {
      const counter = this.counters.get(key);
      if (counter && counter.windowEnds > now && counter.failures >= maxFailures) wait = Math.max(wait, Math.ceil((counter.windowEnds - now) / 1000));
    }
    return wait;
  }

  fail(keys: string[], now = Date.now()): void {
    for (const key of keys) {
      const counter = this.counters.get(key);
      if (counter && counter.windowEnds > now) {
        counter.failures += 1;
        continue;
      }
      this.counters.delete(key);
      while (this.counters.size >= this.maxKeys) this.counters.delete(this.counters.keys().next().value as string);
      this.counters.set(key, { failures: 1, windowEnds: now + this.options.windowMs });
    }
  }
}

/** The limiter of one authentication point, with its keys: the client id, and the source address at five times the limit (many clients may share one). */
export function clientFailureLimiter(options = failureLimitFromEnv()) {
  const limiter = new FailureLimiter(options);
  const keysOf = (clientId: string, address: string): Array<[string, number]> => [
    [`client:${clientId}`, options.maxFailures],
    [`address:${address}`, options.maxFailures * 5],
  ];
  return {
    retryAfterSeconds: (clientId: string, address: string, now?: number) => limiter.retryAfterSeconds(keysOf(clientId, address), now),
    fail: (clientId: string, address: string, now?: number) =>
      limiter.fail(
        keysOf(clientId, address).map(([key]) => key),
        now,
      ),
  };
}
