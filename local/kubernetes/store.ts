// The simulated API server's object store and the API machinery around it: the resource table
// that discovery and routing share, Status errors shaped as kube-apiserver sends them, label
// selectors, JSON merge patch, resourceVersion/uid/generation bookkeeping, and deletion that
// waits for finalizers.
import { randomUUID } from 'node:crypto';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  generation?: number;
  creationTimestamp: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  generateName?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  managedFields?: JsonObject[];
  [k: string]: Json | OwnerReference[] | undefined;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
  [k: string]: Json | undefined;
}

/** A stored object; spec and status stay loosely typed JSON, each controller reads what it needs. */
export interface KObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: JsonObject;
  status?: JsonObject;
  [k: string]: Json | ObjectMeta | undefined;
}

export interface ResourceType {
  /** Plural name as it appears in paths. */
  resource: string;
  kind: string;
  /** '' for the core group. */
  group: string;
  version: string;
  namespaced: boolean;
  shortNames: string[];
  /** Whether it has a status subresource (its spec changes bump generation). */
  hasStatus: boolean;
}

export const RESOURCES: ResourceType[] = [
  { resource: 'namespaces', kind: 'Namespace', group: '', version: 'v1', namespaced: false, shortNames: ['ns'], hasStatus: true },
  { resource: 'configmaps', kind: 'ConfigMap', group: '', version: 'v1', namespaced: true, shortNames: ['cm'], hasStatus: false },
  { resource: 'secrets', kind: 'Secret', group: '', version: 'v1', namespaced: true, shortNames: [], hasStatus: false },
  { resource: 'services', kind: 'Service', group: '', version: 'v1', namespaced: true, shortNames: ['svc'], hasStatus: true },
  { resource: 'pods', kind: 'Pod', group: '', version: 'v1', namespaced: true, shortNames: ['po'], hasStatus: true },
  { resource: 'deployments', kind: 'Deployment', group: 'apps', version: 'v1', namespaced: true, shortNames: ['deploy'], hasStatus: true },
  { resource: 'replicasets', kind: 'ReplicaSet', group: 'apps', version: 'v1', namespaced: true, shortNames: ['rs'], hasStatus: true },
  { resource: 'nodes', kind: 'Node', group: '', version: 'v1', namespaced: false, shortNames: ['no'], hasStatus: true },
  { resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', group: '', version: 'v1', namespaced: true, shortNames: ['pvc'], hasStatus: true },
  { resource: 'statefulsets', kind: 'StatefulSet', group: 'apps', version: 'v1', namespaced: true, shortNames: ['sts'], hasStatus: true },
  { resource: 'daemonsets', kind: 'DaemonSet', group: 'apps', version: 'v1', namespaced: true, shortNames: ['ds'], hasStatus: true },
  { resource: 'controllerrevisions', kind: 'ControllerRevision', group: 'apps', version: 'v1', namespaced: true, shortNames: [], hasStatus: false },
];

/** Kinds with a status whose objects still carry no metadata.generation in kube-apiserver. */
const NO_GENERATION = new Set(['namespaces', 'services', 'nodes', 'persistentvolumeclaims']);

export function apiVersionOf(t: ResourceType): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

/** "deployments.apps" / "pods", as kube-apiserver names a resource in messages. */
export function qualified(t: ResourceType): string {
  return t.group ? `${t.resource}.${t.group}` : t.resource;
}

// ---------------------------------------------------------------------------------------------
// Status errors

export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: JsonObject,
  ) {
    super(message);
  }

  toStatus(): JsonObject {
    return statusObject('Failure', this.code, this.reason, this.message, this.details);
  }
}

export function statusObject(status: 'Success' | 'Failure', code: number, reason: string, message: string, details?: JsonObject): JsonObject {
  const body: JsonObject = { kind: 'Status', apiVersion: 'v1', metadata: {}, status };
  if (message) body.message = message;
  if (reason) body.reason = reason;
  if (details) body.details = details;
  body.code = code;
  return body;
}

const detailsOf = (t: ResourceType, name: string): JsonObject => ({ name, ...(t.group ? { group: t.group } : {}), kind: t.resource });

export const notFound = (t: ResourceType, name: string) => new StatusError(404, 'NotFound', `${qualified(t)} "${name}" not found`, detailsOf(t, name));
export const alreadyExists = (t: ResourceType, name: string) =>
  new StatusError(409, 'AlreadyExists', `${qualified(t)} "${name}" already exists`, detailsOf(t, name));
export const conflict = (t: ResourceType, name: string) =>
  new StatusError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(t)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    detailsOf(t, name),
  );
export const invalid = (t: ResourceType, name: string, field: string, problem: string) =>
  new StatusError(422, 'Invalid', `${t.kind} "${name}" is invalid: ${field}: ${problem}`, {
    ...detailsOf(t, name),
    kind: t.kind,
    causes: [{ reason: 'FieldValueInvalid', message: problem, field }],
  });
export const badRequest = (message: string) => new StatusError(400, 'BadRequest', message);

// ---------------------------------------------------------------------------------------------
// Label selectors (the string form in ?labelSelector= and the structured form in spec.selector)

type Requirement = { key: string; op: 'in' | 'notin' | 'exists' | '!exists'; values: string[] };

/** Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h`; throws 400 on anything else. */
export function parseLabelSelector(text: string): Requirement[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  const reqs: Requirement[] = [];
  for (const raw of parts.map((p) => p.trim()).filter((p) => p !== '')) {
    let m: RegExpMatchArray | null;
    if ((m = raw.match(/^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
      reqs.push({
        key: m[1]!,
        op: m[2] as 'in' | 'notin',
        values: m[3]!
          .split(',')
          .map((v) => v.trim())
          .filter((v) => v !== ''),
      });
    } else if ((m = raw.match(/^([\w./-]+)\s*(==|=|!=)\s*([\w./-]*)$/))) {
      reqs.push({ key: m[1]!, op: m[2] === '!=' ? 'notin' : 'in', values: [m[3]!] });
    } else if ((m = raw.match(/^(!?)([\w./-]+)$/))) {
      reqs.push({ key: m[2]!, op: m[1] ? '!exists' : 'exists', values: [] });
    } else {
      throw badRequest(`unable to parse requirement: ${JSON.stringify(raw)}`);
    }
  }
  return reqs;
}

/** spec.selector's matchLabels/matchExpressions as requirements. */
export function structuredSelector(selector: Json | undefined): Requirement[] {
  if (!isObject(selector)) return [];
  const reqs: Requirement[] = [];
  const ml = selector.matchLabels;
  if (isObject(ml)) for (const [k, v] of Object.entries(ml)) reqs.push({ key: k, op: 'in', values: [String(v)] });
  const me = selector.matchExpressions;
  if (Array.isArray(me)) {
    for (const e of me) {
      if (!isObject(e)) continue;
      const op = String(e.operator);
      const values = Array.isArray(e.values) ? e.values.map(String) : [];
      const mapped = op === 'In' ? 'in' : op === 'NotIn' ? 'notin' : op === 'Exists' ? 'exists' : '!exists';
      reqs.push({ key: String(e.key), op: mapped, values });
    }
  }
  return reqs;
}

export function matchesLabels(reqs: Requirement[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.hasOwn(l, r.key);
    switch (r.op) {
      case 'in':
        return has && r.values.includes(l[r.key]!);
      case 'notin':
        return !has || !r.values.includes(l[r.key]!);
      case 'exists':
        return has;
      case '!exists':
        return !has;
      default:
        return false;
    }
  });
}

/** Field selectors: only the fields kube-apiserver supports everywhere plus pods' status.phase/spec.nodeName. */
export function matchesFields(text: string, obj: KObject): boolean {
  for (const raw of text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const m = raw.match(/^([\w.]+)\s*(==|=|!=)\s*(.*)$/);
    if (!m) throw badRequest(`invalid field selector: ${raw}`);
    const [, field, op, want] = m as unknown as [string, string, string, string];
    let actual: string | undefined;
    if (field === 'metadata.name') actual = obj.metadata.name;
    else if (field === 'metadata.namespace') actual = obj.metadata.namespace;
    else if (field === 'status.phase') actual = String(obj.status?.phase ?? '');
    else if (field === 'spec.nodeName') actual = String(obj.spec?.nodeName ?? '');
    else throw badRequest(`field label not supported: ${field}`);
    if ((op === '!=') === (actual === want)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// JSON helpers

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** JSON with object keys sorted, so equal documents compare (and hash) equal whatever their key order. */
export function canonicalJson(v: Json | undefined): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

export const deepEqual = (a: Json | undefined, b: Json | undefined): boolean => canonicalJson(a) === canonicalJson(b);

/** RFC 7386 merge patch: objects merge, null removes, lists are replaced whole. */
export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

export const clone = <T>(v: T): T => structuredClone(v);

// ---------------------------------------------------------------------------------------------
// The store

/** All objects, keyed by resource/namespace/name, with one global resourceVersion counter. */
export class Store {
  #objects = new Map<string, KObject>();
  #rv = 1;
  /** Called after every change, so controllers can react. */
  onChange: () => void = () => {};

  static key(t: ResourceType, namespace: string | undefined, name: string): string {
    return `${t.resource}/${t.namespaced ? (namespace ?? '') : ''}/${name}`;
  }

  get(t: ResourceType, namespace: string | undefined, name: string): KObject | undefined {
    return this.#objects.get(Store.key(t, namespace, name));
  }

  mustGet(t: ResourceType, namespace: string | undefined, name: string): KObject {
    const obj = this.get(t, namespace, name);
    if (!obj) throw notFound(t, name);
    return obj;
  }

  list(t: ResourceType, namespace?: string): KObject[] {
    const prefix = t.namespaced && namespace !== undefined ? `${t.resource}/${namespace}/` : `${t.resource}/`;
    return [...this.#objects.entries()].filter(([k]) => k.startsWith(prefix)).map(([, v]) => v);
  }

  get resourceVersion(): string {
    return String(this.#rv);
  }

  /** Stores a new object, filling uid, resourceVersion, generation and creationTimestamp. */
  create(t: ResourceType, obj: KObject): KObject {
    const meta = obj.metadata;
    if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomSuffix(5)}`;
    if (!meta.name) throw invalid(t, '', 'metadata.name', 'Required value: name or generateName is required');
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(meta.name) || meta.name.length > 253) {
      throw invalid(
        t,
        meta.name,
        'metadata.name',
        `Invalid value: "${meta.name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`,
      );
    }
    const key = Store.key(t, meta.namespace, meta.name);
    if (this.#objects.has(key)) throw alreadyExists(t, meta.name);
    obj.apiVersion = apiVersionOf(t);
    obj.kind = t.kind;
    meta.uid = randomUUID();
    meta.resourceVersion = String(++this.#rv);
    meta.creationTimestamp = timestamp();
    if (t.hasStatus && !NO_GENERATION.has(t.resource)) meta.generation = 1;
    else delete meta.generation;
    if (!t.namespaced) delete meta.namespace;
    this.#objects.set(key, obj);
    this.onChange();
    return obj;
  }

  /**
   * Replaces a stored object; bumps generation when the spec changed, never when only status did.
   * An object being deleted whose last finalizer this removes is deleted, as kube-apiserver does.
   */
  update(t: ResourceType, next: KObject): KObject {
    const key = Store.key(t, next.metadata.namespace, next.metadata.name);
    const prev = this.#objects.get(key);
    if (!prev) throw notFound(t, next.metadata.name);
    if (JSON.stringify(prev) === JSON.stringify(next)) return prev;
    next.metadata.uid = prev.metadata.uid;
    next.metadata.creationTimestamp = prev.metadata.creationTimestamp;
    if (prev.metadata.deletionTimestamp) next.metadata.deletionTimestamp = prev.metadata.deletionTimestamp;
    else delete next.metadata.deletionTimestamp;
    if (next.metadata.finalizers?.length === 0) delete next.metadata.finalizers;
    if (prev.metadata.generation !== undefined) {
      next.metadata.generation = prev.metadata.generation + (deepEqual(prev.spec, next.spec) ? 0 : 1);
    }
    next.metadata.resourceVersion = String(++this.#rv);
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers) {
      this.#objects.delete(key);
      this.onChange();
      return next;
    }
    this.#objects.set(key, next);
    this.onChange();
    return next;
  }

  /**
   * Starts deleting an object: at once when it has no finalizers (after adding `finalizer`, the
   * garbage collector's orphan/foregroundDeletion), otherwise by setting deletionTimestamp and
   * leaving it to whoever owns the finalizers. Returns the object and whether it is gone.
   */
  beginDelete(t: ResourceType, obj: KObject, finalizer?: string): { deleted: boolean; obj: KObject } {
    const finalizers = [...(obj.metadata.finalizers ?? [])];
    if (finalizer && !finalizers.includes(finalizer)) finalizers.push(finalizer);
    if (finalizers.length === 0) return { deleted: true, obj: this.delete(t, obj.metadata.namespace, obj.metadata.name) };
    if (obj.metadata.deletionTimestamp && finalizers.length === obj.metadata.finalizers?.length) return { deleted: false, obj };
    const next = clone(obj);
    next.metadata.finalizers = finalizers;
    next.metadata.deletionGracePeriodSeconds = 0;
    const key = Store.key(t, obj.metadata.namespace, obj.metadata.name);
    next.metadata.deletionTimestamp ??= timestamp();
    next.metadata.resourceVersion = String(++this.#rv);
    if (next.metadata.generation !== undefined) next.metadata.generation++;
    this.#objects.set(key, next);
    this.onChange();
    return { deleted: false, obj: next };
  }

  delete(t: ResourceType, namespace: string | undefined, name: string): KObject {
    const key = Store.key(t, namespace, name);
    const obj = this.#objects.get(key);
    if (!obj) throw notFound(t, name);
    this.#objects.delete(key);
    this.#rv++;
    this.onChange();
    return obj;
  }

  /** Every stored object (for garbage collection by owner uid). */
  all(): Array<{ type: ResourceType; obj: KObject }> {
    const out: Array<{ type: ResourceType; obj: KObject }> = [];
    for (const [key, obj] of this.#objects) {
      const type = RESOURCES.find((r) => key.startsWith(`${r.resource}/`));
      if (type) out.push({ type, obj });
    }
    return out;
  }
}

export function timestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function randomSuffix(n: number): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(Math.random() * alphabet.length)];
  return s;
}
