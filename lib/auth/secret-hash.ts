// Client secrets as the issuer keeps them: a scrypt hash per client, checked off the event
// loop (async scrypt runs on libuv's thread pool) with at most a few hashes at once, so a burst
// of token requests cannot stall the API that shares the process. A client id that does not
// exist costs one full hash too, against a dummy, so the time of an answer tells nothing about
// which ids exist.
import { randomBytes, scrypt, scryptSync, timingSafeEqual } from 'node:crypto';

const SALT_BYTES = 16;
const HASH_BYTES = 32;

export type ScryptFunction = (secret: string, salt: Buffer, length: number) => Promise<Buffer>;

const scryptOffLoop: ScryptFunction = (secret, salt, length) =>
  new Promise((resolve, reject) => {
    scrypt(secret, salt, length, (error, key) => (error ? reject(error) : resolve(key)));
  });

/** `scrypt$<salt b64url>$<hash b64url>`. Synchronous: for the clients command and the first start, never a request. */
export function hashSecret(secret: string): string {
  const salt = randomBytes(SALT_BYTES);
  return `scrypt$${salt.toString('base64url')}$${scryptSync(secret, salt, HASH_BYTES).toString('base64url')}`;
}

/** A stored hash no secret matches, with the real hashes' salt and length, for ids that have none. */
const DUMMY_HASH = `scrypt$${randomBytes(SALT_BYTES).toString('base64url')}$${randomBytes(HASH_BYTES).toString('base64url')}`;

function parts(stored: string): { salt: Buffer; expected: Buffer } | undefined {
  const [kind, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return undefined;
  const expected = Buffer.from(hash, 'base64url');
  return expected.length === HASH_BYTES ? { salt: Buffer.from(salt, 'base64url'), expected } : undefined;
}

/** Too many hashes running and waiting: the caller should answer 503 with Retry-After. */
export class HashingBusyError extends Error {
  constructor() {
    super('Too many client authentications are in progress');
    this.name = 'HashingBusyError';
  }
}

/** At most `running` tasks at once; up to `waiting` more queue in order, and beyond that a task is refused. */
export function concurrencyLimit(running: number, waiting: number) {
  let active = 0;
  const queue: Array<() => void> = [];
  return async function limited<T>(task: () => Promise<T>): Promise<T> {
    if (active >= running) {
      if (queue.length >= waiting) throw new HashingBusyError();
      await new Promise<void>((resolve) => queue.push(resolve));
    } else {
      active += 1;
    }
    try {
      return await task();
    } finally {
      const next = queue.shift();
      if (next)
        next(); // the slot passes straight to the next task
      else active -= 1;
    }
  };
}

export interface SecretVerifier {
  /** Whether `secret` matches `stored` (undefined: no such client, still one full hash). */
  matches(secret: string, stored: string | undefined): Promise<boolean>;
}

/** Two hashes at once leave libuv's other pool threads (four by default) to file and DNS work. */
export function secretVerifier(options: { running?: number; waiting?: number; scrypt?: ScryptFunction } = {}): SecretVerifier {
  const limited = concurrencyLimit(options.running ?? 2, options.waiting ?? 64);
  const hash = options.scrypt ?? scryptOffLoop;
  return {
    matches: (secret, stored) =>
      limited(async () => {
        const known = stored === undefined ? undefined : parts(stored);
        const { salt, expected } = known ?? (parts(DUMMY_HASH) as NonNullable<ReturnType<typeof parts>>);
        const actual = await hash(secret, salt, HASH_BYTES);
        return timingSafeEqual(actual, expected) && known !== undefined;
      }),
  };
}
