// The patch formats kube-apiserver accepts besides JSON merge patch: RFC 6902 JSON Patch, strategic
// merge patch with the merge keys of the built-in kinds, and the field sets server-side apply
// keeps in metadata.managedFields (FieldsV1), used to find conflicts between managers and the
// fields a manager stopped applying.
import { badRequest, clone, deepEqual, isObject, StatusError, type Json, type JsonObject } from './store.ts';

// ---------------------------------------------------------------------------------------------
// JSON Patch (RFC 6902)

/** A JSON Patch that is well formed but cannot be applied: kube-apiserver answers 422. */
const unprocessable = (message: string) => new StatusError(422, 'Invalid', message);

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw unprocessable(`invalid JSON pointer: ${JSON.stringify(path)}`);
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(token: string, length: number, path: string): number {
  if (!/^(0|[1-9]\d*)$/.test(token) || Number(token) >= length) throw unprocessable(`index out of range in ${path}`);
  return Number(token);
}

function valueAtPointer(doc: Json, path: string): Json {
  let cur = doc;
  for (const token of pointer(path)) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(token, cur.length, path)]!;
    else if (isObject(cur) && Object.hasOwn(cur, token)) cur = cur[token]!;
    else throw unprocessable(`doc is missing path: ${path}`);
  }
  return cur;
}

/** The container a pointer's last token addresses, and that token. */
function parentOf(doc: Json, path: string): { parent: Json; token: string } {
  const tokens = pointer(path);
  const token = tokens.pop()!;
  const parentPath = tokens.map((t) => `/${t.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
  return { parent: valueAtPointer(doc, parentPath), token };
}

function addAt(doc: Json, path: string, value: Json): Json {
  if (path === '') return value;
  const { parent, token } = parentOf(doc, path);
  if (Array.isArray(parent)) {
    const i = token === '-' ? parent.length : arrayIndex(token, parent.length + 1, path);
    parent.splice(i, 0, value);
  } else if (isObject(parent)) parent[token] = value;
  else throw unprocessable(`doc is missing path: ${path}`);
  return doc;
}

function removeAt(doc: Json, path: string): Json {
  if (path === '') throw unprocessable('cannot remove the whole document');
  const { parent, token } = parentOf(doc, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(token, parent.length, path), 1);
  else if (isObject(parent) && Object.hasOwn(parent, token)) delete parent[token];
  else throw unprocessable(`remove operation does not apply: doc is missing path: ${path}`);
  return doc;
}

/** Applies RFC 6902 operations; a malformed patch is a 400, one that does not apply a 422. */
export function applyJsonPatch(doc: Json, ops: unknown): Json {
  if (!Array.isArray(ops)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let root = clone(doc);
  for (const op of ops as unknown[]) {
    if (!isObject(op) || typeof op.op !== 'string' || typeof op.path !== 'string') throw badRequest('a JSON Patch operation needs string "op" and "path"');
    const { path } = op;
    const from = typeof op.from === 'string' ? op.from : undefined;
    const needValue = (): Json => {
      if (!Object.hasOwn(op, 'value')) throw badRequest(`the ${String(op.op)} operation at ${path} needs a "value"`);
      return clone(op.value!);
    };
    const needFrom = (): string => {
      if (from === undefined) throw badRequest(`the ${String(op.op)} operation at ${path} needs a "from"`);
      return from;
    };
    switch (op.op) {
      case 'add':
        root = addAt(root, path, needValue());
        break;
      case 'remove':
        root = removeAt(root, path);
        break;
      case 'replace': {
        const value = needValue();
        valueAtPointer(root, path);
        root = path === '' ? value : addAt(removeAt(root, path), path, value);
        break;
      }
      case 'move': {
        const source = needFrom();
        if (path.startsWith(`${source}/`)) throw unprocessable(`cannot move ${source} into its own child ${path}`);
        const value = valueAtPointer(root, source);
        root = addAt(removeAt(root, source), path, value);
        break;
      }
      case 'copy':
        root = addAt(root, path, clone(valueAtPointer(root, needFrom())));
        break;
      case 'test':
        if (!deepEqual(valueAtPointer(root, path), needValue())) throw unprocessable(`testing value ${path} failed: test failed`);
        break;
      default:
        throw badRequest(`Unexpected kind: ${String(op.op)}`);
    }
  }
  return root;
}

// ---------------------------------------------------------------------------------------------
// Strategic merge patch

/** patchMergeKey of the lists the built-in kinds merge by key (all others are replaced whole). */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  resourceClaims: 'name',
  ownerReferences: 'uid',
  conditions: 'type',
  addresses: 'type',
};

const CONTAINER_LISTS = new Set(['containers', 'initContainers', 'ephemeralContainers']);

/** The merge key of list `field` inside an object that is itself `owner` (its field or list name). */
export function mergeKeyOf(field: string, owner: string | undefined): string | undefined {
  // A container's ports merge by containerPort, a Service's by port.
  if (field === 'ports') return owner !== undefined && CONTAINER_LISTS.has(owner) ? 'containerPort' : 'port';
  return MERGE_KEYS[field];
}

/** Primitive lists with patchStrategy merge: patched items are added to the existing ones. */
const MERGED_PRIMITIVE_LISTS = new Set(['finalizers']);

/**
 * Applies a strategic merge patch: maps merge (null deletes a key), keyed lists merge element by
 * element, `$patch: replace|delete` works on maps and keyed-list elements, `$retainKeys` and
 * `$deleteFromPrimitiveList/<field>` are honoured, `$setElementOrder/<field>` is accepted.
 */
export function strategicMerge(target: Json | undefined, patch: Json, owner?: string): Json {
  if (!isObject(patch)) return clone(patch);
  if (patch.$patch === 'replace') return stripDirectives(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/') || k.startsWith('$deleteFromPrimitiveList/')) continue;
    if (v === null || (isObject(v) && v.$patch === 'delete')) delete out[k];
    else if (Array.isArray(v)) out[k] = mergeList(out[k], v, k, owner);
    else if (isObject(v)) out[k] = strategicMerge(out[k], v, k);
    else out[k] = v;
  }
  for (const [k, v] of Object.entries(patch)) {
    const field = k.startsWith('$deleteFromPrimitiveList/') ? k.slice('$deleteFromPrimitiveList/'.length) : undefined;
    const current = field === undefined ? undefined : out[field];
    if (field !== undefined && Array.isArray(current) && Array.isArray(v)) out[field] = current.filter((item) => !v.some((d) => deepEqual(d, item)));
  }
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys.map(String));
    for (const k of Object.keys(out)) if (!keep.has(k)) delete out[k];
  }
  return out;
}

function mergeList(target: Json | undefined, patch: Json[], field: string, owner: string | undefined): Json[] {
  const current = Array.isArray(target) ? target : [];
  if (MERGED_PRIMITIVE_LISTS.has(field)) return [...current, ...patch.filter((p) => !current.some((c) => deepEqual(c, p)))];
  const key = mergeKeyOf(field, owner);
  if (key === undefined) return patch.map(stripDirectives);
  if (patch.some((item) => isObject(item) && item.$patch === 'replace')) {
    return patch.filter((item) => !(isObject(item) && item.$patch === 'replace')).map(stripDirectives);
  }
  const out = [...current];
  for (const item of patch) {
    if (!isObject(item) || item[key] === undefined) {
      out.push(stripDirectives(item));
      continue;
    }
    const i = out.findIndex((e) => isObject(e) && deepEqual(e[key], item[key]));
    if (item.$patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
    } else if (i >= 0) out[i] = strategicMerge(out[i], item, field);
    else out.push(strategicMerge(undefined, item, field));
  }
  return out;
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith('$')) out[k] = stripDirectives(x);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Field sets for server-side apply (the FieldsV1 format: "f:<field>", "k:<merge key JSON>", ".")

/** Metadata fields the server owns; applying them is not recorded. */
const SERVER_METADATA = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
]);

/** The FieldsV1 set of an applied configuration. */
export function fieldSetOf(config: JsonObject): JsonObject {
  const top: JsonObject = { ...config };
  delete top.apiVersion;
  delete top.kind;
  if (isObject(top.metadata)) {
    const meta: JsonObject = {};
    for (const [k, v] of Object.entries(top.metadata)) if (!SERVER_METADATA.has(k)) meta[k] = v;
    if (Object.keys(meta).length > 0) top.metadata = meta;
    else delete top.metadata;
  }
  return fieldsOf(top, undefined);
}

function fieldsOf(obj: JsonObject, owner: string | undefined): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) {
    const key = Array.isArray(v) ? mergeKeyOf(k, owner) : undefined;
    if (isObject(v) && Object.keys(v).length > 0) out[`f:${k}`] = fieldsOf(v, k);
    else if (Array.isArray(v) && key !== undefined && v.every((e) => isObject(e) && e[key] !== undefined)) {
      const items: JsonObject = {};
      for (const e of v as JsonObject[]) items[`k:${JSON.stringify({ [key]: e[key] })}`] = { '.': {}, ...fieldsOf(e, k) };
      out[`f:${k}`] = items;
    } else out[`f:${k}`] = {};
  }
  return out;
}

/** Every leaf path of a field set, as lists of FieldsV1 keys. */
function leaves(set: JsonObject, prefix: string[] = []): string[][] {
  const out: string[][] = [];
  for (const [k, v] of Object.entries(set)) {
    if (k === '.') continue;
    const children = isObject(v) ? Object.keys(v).filter((c) => c !== '.') : [];
    if (children.length > 0 && isObject(v)) out.push(...leaves(v, [...prefix, k]));
    else out.push([...prefix, k]);
  }
  return out;
}

/** Whether `set` owns `path` or one of its ancestors as a whole. */
function owns(set: JsonObject, path: string[]): boolean {
  let cur: JsonObject = set;
  for (const step of path) {
    const next = cur[step];
    if (!isObject(next)) return false;
    if (Object.keys(next).filter((c) => c !== '.').length === 0) return true;
    cur = next;
  }
  return true;
}

function childOf(v: Json | undefined, step: string): Json | undefined {
  if (step.startsWith('f:')) return isObject(v) ? v[step.slice(2)] : undefined;
  const key = JSON.parse(step.slice(2)) as JsonObject;
  return Array.isArray(v) ? v.find((e) => isObject(e) && Object.entries(key).every(([k, x]) => deepEqual(e[k], x))) : undefined;
}

function valueAt(obj: Json, path: string[]): Json | undefined {
  let cur: Json | undefined = obj;
  for (const step of path) cur = childOf(cur, step);
  return cur;
}

/** ".spec.template.spec.containers[name="web"].image", as kube names a field in a conflict. */
export function describePath(path: string[]): string {
  return path
    .map((step) => {
      if (step.startsWith('f:')) return `.${step.slice(2)}`;
      const key = JSON.parse(step.slice(2)) as JsonObject;
      return `[${Object.entries(key)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    })
    .join('');
}

/** Fields `applied` sets to a value other than the live one while another manager's set owns them. */
export function conflictsWith(applied: JsonObject, appliedSet: JsonObject, live: Json, otherSet: JsonObject): string[][] {
  return leaves(appliedSet).filter((p) => owns(otherSet, p) && !deepEqual(valueAt(applied, p), valueAt(live, p)));
}

/** `set` without `paths` (and without the branches that leaves empty). */
export function withoutPaths(set: JsonObject, paths: string[][]): JsonObject {
  const out = clone(set);
  for (const path of paths) {
    const trail: JsonObject[] = [out];
    for (const step of path.slice(0, -1)) {
      const next = trail[trail.length - 1]![step];
      if (!isObject(next)) break;
      trail.push(next);
    }
    if (trail.length !== path.length) continue;
    delete trail[trail.length - 1]![path[path.length - 1]!];
    for (let i = trail.length - 1; i > 0; i--) {
      if (Object.keys(trail[i]!).some((k) => k !== '.')) break;
      delete trail[i - 1]![path[i - 1]!];
    }
  }
  return out;
}

/**
 * Removes from `obj` what a manager applied before (`previous`) but no longer applies (`current`),
 * unless another manager (`others`) owns it too.
 */
export function pruneUnapplied(obj: Json, previous: JsonObject, current: JsonObject | undefined, others: JsonObject[]): void {
  for (const [step, sub] of Object.entries(previous)) {
    if (step === '.') continue;
    const now = current?.[step];
    const otherSubs = others.map((o) => o[step]).filter(isObject);
    const child = childOf(obj, step);
    if (now === undefined && otherSubs.length === 0) removeChild(obj, step);
    else if (child !== undefined && isObject(sub) && Object.keys(sub).some((k) => k !== '.')) {
      if (isObject(now) && Object.keys(now).filter((k) => k !== '.').length === 0) continue;
      if (otherSubs.some((o) => Object.keys(o).filter((k) => k !== '.').length === 0)) continue;
      pruneUnapplied(child, sub, isObject(now) ? now : undefined, otherSubs);
    }
  }
}

function removeChild(obj: Json, step: string): void {
  if (step.startsWith('f:')) {
    if (isObject(obj)) delete obj[step.slice(2)];
    return;
  }
  const item = childOf(obj, step);
  if (Array.isArray(obj) && item !== undefined) obj.splice(obj.indexOf(item), 1);
}
