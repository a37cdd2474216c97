// The one test for "a JSON object" (a plain mapping, not an array or null) that code reading untrusted
// or loosely typed data narrows with before it looks at fields.

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
