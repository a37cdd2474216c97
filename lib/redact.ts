// The one place that decides what a secret looks like: attributes named like credentials (whatever
// their type, at any depth, and everything under accessInfo/authentication) and the user:password
// part of URLs. Stored copies of requests, records, notifications and log lines all pass through
// redactSecrets, so a credential given in the wrong place or with the wrong type is still not kept.

/** Attribute names whose values are credentials, or hold them. A CA certificate is public and kept. */
const SECRET_KEY =
  /passw(or)?d|passphrase|^pass$|^pwd$|secret|token|credential|accessinfo|authorization|authentication|api[-_]?key|private[-_]?key|client[-_]?key/i;

/** scheme://user:password@host — the userinfo part, wherever a URL sits inside a string. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]*@/gi;

const MAX_DEPTH = 32;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** The string with any URL's userinfo removed ("http://u:p@h/x" -> "http://h/x"). */
export function withoutUserinfo(text: string): string {
  return text.replace(URL_USERINFO, '$1');
}

export interface RedactOptions {
  /** Put this in place of a secret attribute's value (logs show that something was there); default: drop the attribute. */
  marker?: string;
}

/** A copy of `value` with credential-named attributes removed (or masked) and URL userinfo stripped. */
export function redactSecrets<T>(value: T, options: RedactOptions = {}): T {
  return redactAt(value, options, 0) as T;
}

function redactAt(value: unknown, options: RedactOptions, depth: number): unknown {
  if (typeof value === 'string') return withoutUserinfo(value);
  if (depth > MAX_DEPTH) return options.marker ?? undefined;
  if (Array.isArray(value)) return value.map((item) => redactAt(item, options, depth + 1));
  if (value instanceof Error) return { name: value.name, message: withoutUserinfo(value.message), stack: value.stack && withoutUserinfo(value.stack) };
  if (Buffer.isBuffer(value) || value instanceof Date) return value;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (!isSecretKey(key)) out[key] = redactAt(item, options, depth + 1);
      else if (options.marker !== undefined) out[key] = options.marker;
    }
    return out;
  }
  return value;
}
