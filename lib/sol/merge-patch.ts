// JSON Merge Patch (IETF RFC 7396), which SOL003 uses for PATCH of VNF instances and for the
// map-valued attributes inside a modification.
import { isRecord as isObject } from '#lib/json.ts';

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else if (value !== undefined) result[key] = mergePatch(result[key], value);
  }
  return result;
}
