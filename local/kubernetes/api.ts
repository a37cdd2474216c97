// The REST verbs of kube-apiserver over the store: create with per-kind defaulting (ClusterIP,
// Secret stringData, pods, workloads, nodes, claims), get, list with label/field selectors,
// replace, the four patch types (JSON merge, strategic merge, JSON Patch, server-side apply with
// managedFields) with optimistic concurrency, status and scale subresources, and delete with
// Background/Foreground/Orphan propagation and namespace cascades. Everything here is
// synchronous; controllers react afterwards.
import { daemonSetDefaults, deploymentDefaults, persistentVolumeClaimDefaults, podDefaults, statefulSetDefaults, T, WORKLOADS } from './defaults.ts';
import { nodeDefaults } from './nodes.ts';
import { applyJsonPatch, conflictsWith, describePath, fieldSetOf, pruneUnapplied, strategicMerge, withoutPaths } from './patch.ts';
import {
  apiVersionOf,
  badRequest,
  clone,
  conflict,
  deepEqual,
  invalid,
  isObject,
  matchesFields,
  matchesLabels,
  mergePatch,
  notFound,
  parseLabelSelector,
  statusObject,
  type Store,
  StatusError,
  structuredSelector,
  timestamp,
  type Json,
  type JsonObject,
  type KObject,
  type ObjectMeta,
  type ResourceType,
} from './store.ts';

export type Subresource = 'status' | 'scale' | undefined;

export const APPLY_PATCH = 'application/apply-patch+yaml';
const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';
const PATCH_TYPES = [JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH];

/** Fields of a StatefulSet's spec that may change after creation. */
const STATEFULSET_MUTABLE = [
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
  'revisionHistoryLimit',
];

/** PatchOptions/DeleteOptions validation failures, shaped as kube-apiserver reports them. */
function optionsInvalid(kind: 'PatchOptions' | 'DeleteOptions', field: string, reason: string, problem: string): StatusError {
  return new StatusError(422, 'Invalid', `${kind}.meta.k8s.io "" is invalid: ${field}: ${problem}`, {
    group: 'meta.k8s.io',
    kind,
    causes: [{ reason, message: problem, field }],
  });
}

export class Api {
  #nextClusterIp = 10;
  #nextNodePort = 30000;
  #nextNodeIndex = 1;

  constructor(readonly store: Store) {}

  #requireNamespace(t: ResourceType, namespace: string | undefined): void {
    if (t.namespaced && (namespace === undefined || !this.store.get(T.namespaces, undefined, namespace))) {
      throw notFound(T.namespaces, namespace ?? '');
    }
  }

  get(t: ResourceType, namespace: string | undefined, name: string, sub: Subresource): JsonObject {
    const obj = this.store.mustGet(t, namespace, name);
    return sub === 'scale' ? scaleOf(t, obj) : out(obj);
  }

  list(t: ResourceType, namespace: string | undefined, query: URLSearchParams): JsonObject {
    if (query.get('watch') === 'true' || query.get('watch') === '1') {
      throw new StatusError(405, 'MethodNotAllowed', 'watch is not supported by the Kubernetes simulator');
    }
    const labels = parseLabelSelector(query.get('labelSelector') ?? '');
    const fields = query.get('fieldSelector') ?? '';
    const items = this.store
      .list(t, namespace)
      .filter((o) => matchesLabels(labels, o.metadata.labels) && matchesFields(fields, o))
      .sort((a, b) => `${a.metadata.namespace ?? ''}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace ?? ''}/${b.metadata.name}`))
      .map((o) => {
        // Items in a typed list carry no kind/apiVersion, as kube-apiserver sends them.
        const { kind: _k, apiVersion: _a, ...rest } = out(o);
        return rest;
      });
    return { kind: `${t.kind}List`, apiVersion: apiVersionOf(t), metadata: { resourceVersion: this.store.resourceVersion }, items };
  }

  create(t: ResourceType, namespace: string | undefined, body: unknown): JsonObject {
    const obj = this.#incoming(t, namespace, body, undefined);
    this.#requireNamespace(t, namespace);
    delete obj.status;
    this.#defaults(t, obj);
    return out(this.store.create(t, obj));
  }

  replace(t: ResourceType, namespace: string | undefined, name: string, body: unknown, sub: Subresource): JsonObject {
    const current = this.store.mustGet(t, namespace, name);
    if (sub === 'scale') return this.#scaleTo(t, current, body);
    const obj = this.#incoming(t, namespace, body, name);
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== current.metadata.resourceVersion) throw conflict(t, name);
    return out(this.store.update(t, this.#merged(t, current, obj, sub)));
  }

  /** Any of the four patch types; 201 when server-side apply created the object. */
  patch(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    contentType: string,
    query: URLSearchParams,
    sub: Subresource,
  ): { status: number; body: JsonObject } {
    const type = contentType.split(';')[0]!.trim().toLowerCase();
    if (!PATCH_TYPES.includes(type)) {
      throw new StatusError(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`,
      );
    }
    const manager = query.get('fieldManager') ?? '';
    if (type === APPLY_PATCH && manager === '')
      throw optionsInvalid('PatchOptions', 'fieldManager', 'FieldValueRequired', 'Required value: is required for apply patch');
    if (type !== APPLY_PATCH && query.has('force'))
      throw optionsInvalid('PatchOptions', 'force', 'FieldValueForbidden', 'Forbidden: may not be specified for non-apply patch');
    if (type === APPLY_PATCH) return this.#apply(t, namespace, name, body, manager, query.get('force') === 'true', sub);

    const current = this.store.mustGet(t, namespace, name);
    if (sub === 'scale') return { status: 200, body: this.#scaleTo(t, current, patched(scaleOf(t, current), body, type)) };
    const result = patched(out(current), body, type);
    const rv = isObject(result) && isObject(result.metadata) ? result.metadata.resourceVersion : undefined;
    if (typeof rv === 'string' && rv !== current.metadata.resourceVersion) throw conflict(t, name);
    const obj = this.#incoming(t, namespace, result, name);
    return { status: 200, body: out(this.store.update(t, this.#merged(t, current, obj, sub))) };
  }

  /**
   * Server-side apply: creates the object, or merges the applied configuration into it, refusing
   * (unless forced) to change fields another applier owns, removing fields this manager applied
   * before and now leaves out, and recording the manager's field set in metadata.managedFields.
   */
  #apply(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    manager: string,
    force: boolean,
    sub: Subresource,
  ): { status: number; body: JsonObject } {
    if (sub === 'scale') throw badRequest('the simulator does not support server-side apply to the scale subresource');
    if (!isObject(body)) throw badRequest('the applied configuration must be an object');
    if (body.apiVersion !== apiVersionOf(t) || body.kind !== t.kind) {
      throw badRequest(
        `the applied configuration must have apiVersion "${apiVersionOf(t)}" and kind "${t.kind}" (got "${String(body.apiVersion ?? '')}", "${String(body.kind ?? '')}")`,
      );
    }
    const config = clone(body);
    const meta = isObject(config.metadata) ? config.metadata : (config.metadata = {});
    if (meta.name !== undefined && meta.name !== name)
      throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`);
    if (meta.managedFields !== undefined) throw badRequest('metadata.managedFields must be nil');
    meta.name = name;
    const set = fieldSetOf(config);
    const entry: JsonObject = {
      manager,
      operation: 'Apply',
      apiVersion: apiVersionOf(t),
      time: timestamp(),
      fieldsType: 'FieldsV1',
      fieldsV1: set,
      ...(sub ? { subresource: sub } : {}),
    };

    const current = this.store.get(t, namespace, name);
    if (!current) {
      if (sub) throw notFound(t, name);
      return { status: 201, body: this.create(t, namespace, { ...config, metadata: { ...meta, managedFields: [entry] } }) };
    }
    if (typeof meta.resourceVersion === 'string' && meta.resourceVersion !== current.metadata.resourceVersion) throw conflict(t, name);
    const entries = (current.metadata.managedFields ?? []).filter(isObject);
    const mine = entries.findIndex((e) => e.manager === manager && e.operation === 'Apply' && (e.subresource ?? '') === (sub ?? ''));
    const conflicts = entries
      .filter((e, i) => i !== mine && e.operation === 'Apply' && isObject(e.fieldsV1))
      .map((e) => ({ manager: String(e.manager), paths: conflictsWith(config, set, current as unknown as Json, e.fieldsV1 as JsonObject) }))
      .filter((c) => c.paths.length > 0);
    if (conflicts.length > 0 && !force) {
      const fields = conflicts.flatMap((c) => c.paths.map((p) => ({ manager: c.manager, field: describePath(p) })));
      const list =
        fields.length === 1
          ? `conflict with "${fields[0]!.manager}": ${fields[0]!.field}`
          : `conflicts with ${conflicts.map((c) => `"${c.manager}"`).join(', ')}:\n${fields.map((f) => `- ${f.field}`).join('\n')}`;
      throw new StatusError(409, 'Conflict', `Apply failed with ${fields.length} conflict${fields.length === 1 ? '' : 's'}: ${list}`, {
        causes: fields.map((f) => ({ reason: 'FieldManagerConflict', message: `conflict with "${f.manager}"`, field: f.field })),
      });
    }
    // Forcing takes the conflicting fields over from their previous owners.
    const others = entries.map((e, i) => {
      const lost = conflicts.find((c) => c.manager === e.manager && i !== mine && e.operation === 'Apply');
      return lost ? { ...e, fieldsV1: withoutPaths(e.fieldsV1 as JsonObject, lost.paths) } : e;
    });
    const next = strategicMerge(out(current), config) as unknown as KObject;
    const previous = mine >= 0 ? entries[mine]!.fieldsV1 : undefined;
    if (isObject(previous))
      pruneUnapplied(
        next as unknown as Json,
        previous,
        set,
        others
          .filter((_, i) => i !== mine)
          .map((e) => e.fieldsV1)
          .filter(isObject),
      );
    next.metadata.managedFields = mine >= 0 ? others.map((e, i) => (i === mine ? entry : e)) : [...others, entry];
    const obj = this.#incoming(t, namespace, next, name);
    return { status: 200, body: out(this.store.update(t, this.#merged(t, current, obj, sub))) };
  }

  /**
   * Deletes at once, or (Foreground/Orphan, or user finalizers) marks the object deleting and
   * returns it, as kube-apiserver does; the garbage collector finishes the job.
   */
  delete(t: ResourceType, namespace: string | undefined, name: string, query: URLSearchParams, body: unknown): JsonObject {
    const current = this.store.mustGet(t, namespace, name);
    const options = isObject(body) ? body : {};
    const orphanDependents = query.get('orphanDependents') ?? options.orphanDependents;
    let policy = query.get('propagationPolicy') ?? (typeof options.propagationPolicy === 'string' ? options.propagationPolicy : undefined);
    if (policy === undefined && (orphanDependents === 'true' || orphanDependents === true)) policy = 'Orphan';
    if (policy !== undefined && !['Foreground', 'Background', 'Orphan'].includes(policy)) {
      throw optionsInvalid(
        'DeleteOptions',
        'propagationPolicy',
        'FieldValueNotSupported',
        `Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`,
      );
    }
    const preconditions = isObject(options.preconditions) ? options.preconditions : {};
    if (
      (typeof preconditions.uid === 'string' && preconditions.uid !== current.metadata.uid) ||
      (typeof preconditions.resourceVersion === 'string' && preconditions.resourceVersion !== current.metadata.resourceVersion)
    ) {
      throw conflict(t, name);
    }
    if (t === T.namespaces) {
      // Namespace deletion finishes at once here; the real one passes through Terminating.
      for (const { type, obj } of this.store.all()) {
        if (type.namespaced && obj.metadata.namespace === name) this.store.delete(type, name, obj.metadata.name);
      }
      this.store.delete(t, namespace, name);
      const gone = clone(current);
      gone.metadata.deletionTimestamp = timestamp();
      gone.status = { phase: 'Terminating' };
      return out(gone);
    }
    const finalizer = policy === 'Orphan' ? 'orphan' : policy === 'Foreground' ? 'foregroundDeletion' : undefined;
    const { deleted, obj } = this.store.beginDelete(t, current, finalizer);
    if (!deleted) return out(obj);
    if (t === T.pods) {
      const gone = clone(current);
      gone.metadata.deletionTimestamp = timestamp();
      gone.metadata.deletionGracePeriodSeconds = 0;
      return out(gone);
    }
    return statusObject('Success', 200, '', '', { name, ...(t.group ? { group: t.group } : {}), kind: t.resource, uid: current.metadata.uid });
  }

  /** Validates an incoming body's shape and identity against the request path. */
  #incoming(t: ResourceType, namespace: string | undefined, body: unknown, name: string | undefined): KObject {
    if (!isObject(body)) throw badRequest(`the body of the request must be a ${t.kind} object`);
    if (body.kind !== undefined && body.kind !== t.kind)
      throw badRequest(`the kind of the object (${String(body.kind)}) does not match the request (${t.kind})`);
    const obj = clone(body) as unknown as KObject;
    const meta = (isObject(obj.metadata) ? obj.metadata : (obj.metadata = {} as ObjectMeta)) as ObjectMeta;
    if (t.namespaced) {
      if (meta.namespace !== undefined && meta.namespace !== namespace)
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      meta.namespace = namespace!;
    }
    if (name !== undefined) {
      if (meta.name !== undefined && meta.name !== name)
        throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`);
      meta.name = name;
    }
    if (WORKLOADS.includes(t)) {
      const spec = isObject(obj.spec) ? obj.spec : {};
      const selector = structuredSelector(spec.selector);
      if (selector.length === 0) throw invalid(t, meta.name ?? '', 'spec.selector', 'Required value');
      const template = isObject(spec.template) ? spec.template : {};
      const tlabels = isObject(template.metadata) && isObject(template.metadata.labels) ? (template.metadata.labels as Record<string, string>) : {};
      if (!matchesLabels(selector, tlabels)) throw invalid(t, meta.name ?? '', 'spec.template.metadata.labels', '`selector` does not match template `labels`');
      const containers = isObject(template.spec) ? template.spec.containers : undefined;
      if (!Array.isArray(containers) || containers.length === 0) throw invalid(t, meta.name ?? '', 'spec.template.spec.containers', 'Required value');
      if (typeof spec.replicas === 'number' && spec.replicas < 0)
        throw invalid(t, meta.name ?? '', 'spec.replicas', 'Invalid value: must be greater than or equal to 0');
    }
    if (t === T.pods) {
      const containers = isObject(obj.spec) ? obj.spec.containers : undefined;
      if (!Array.isArray(containers) || containers.length === 0) throw invalid(t, meta.name ?? '', 'spec.containers', 'Required value');
    }
    return obj;
  }

  /** A write to the main resource keeps the stored status; a write to /status keeps everything else. */
  #merged(t: ResourceType, current: KObject, incoming: KObject, sub: Subresource): KObject {
    if (sub === 'status') {
      const next = clone(current);
      next.status = incoming.status ?? {};
      if (incoming.metadata.managedFields !== undefined) next.metadata.managedFields = incoming.metadata.managedFields;
      return next;
    }
    const next = incoming;
    next.metadata = {
      ...next.metadata,
      uid: current.metadata.uid,
      creationTimestamp: current.metadata.creationTimestamp,
      resourceVersion: current.metadata.resourceVersion,
    };
    if (current.metadata.generation !== undefined) next.metadata.generation = current.metadata.generation;
    // managedFields left out of a write are kept; an empty list clears them.
    if (next.metadata.managedFields === undefined && current.metadata.managedFields !== undefined) next.metadata.managedFields = current.metadata.managedFields;
    if (Array.isArray(next.metadata.managedFields) && next.metadata.managedFields.length === 0) delete next.metadata.managedFields;
    if (current.metadata.deletionGracePeriodSeconds !== undefined) next.metadata.deletionGracePeriodSeconds = current.metadata.deletionGracePeriodSeconds;
    if (t.hasStatus) {
      if (current.status !== undefined) next.status = current.status;
      else delete next.status;
    }
    if (WORKLOADS.includes(t) && !deepEqual(next.spec?.selector, current.spec?.selector)) {
      throw invalid(t, current.metadata.name, 'spec.selector', 'Invalid value: field is immutable');
    }
    if (t === T.deployments) deploymentDefaults(next);
    if (t === T.statefulsets) {
      statefulSetDefaults(next);
      const frozen = (o: KObject) => Object.fromEntries(Object.entries(o.spec ?? {}).filter(([k]) => !STATEFULSET_MUTABLE.includes(k)));
      if (!deepEqual(frozen(next), frozen(current))) {
        throw invalid(
          t,
          current.metadata.name,
          'spec',
          "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        );
      }
    }
    if (t === T.daemonsets) daemonSetDefaults(next);
    if (t === T.services) {
      // spec.clusterIP is immutable; a replace without it keeps the allocated one.
      const spec = isObject(next.spec) ? next.spec : (next.spec = {});
      spec.clusterIP ??= current.spec?.clusterIP ?? null;
      spec.clusterIPs ??= current.spec?.clusterIPs ?? null;
      if (spec.clusterIP !== current.spec?.clusterIP) throw invalid(t, current.metadata.name, 'spec.clusterIP', 'Invalid value: field is immutable');
    }
    if (t === T.secrets) secretDefaults(next);
    return next;
  }

  #scaleTo(t: ResourceType, current: KObject, body: unknown): JsonObject {
    if (t !== T.deployments && t !== T.replicasets && t !== T.statefulsets) throw notFound(t, current.metadata.name);
    const spec = isObject(body) && isObject(body.spec) ? body.spec : {};
    if (typeof spec.replicas !== 'number' || spec.replicas < 0)
      throw invalid(t, current.metadata.name, 'spec.replicas', 'Invalid value: must be greater than or equal to 0');
    const next = clone(current);
    next.spec = { ...(next.spec ?? {}), replicas: spec.replicas };
    return scaleOf(t, this.store.update(t, next));
  }

  #defaults(t: ResourceType, obj: KObject): void {
    const meta = obj.metadata;
    if (t === T.namespaces) {
      meta.labels = { ...(meta.labels ?? {}), 'kubernetes.io/metadata.name': meta.name };
      obj.spec = { finalizers: ['kubernetes'] };
      obj.status = { phase: 'Active' };
    } else if (t === T.services) {
      const spec = isObject(obj.spec) ? obj.spec : (obj.spec = {});
      spec.type ??= 'ClusterIP';
      spec.sessionAffinity ??= 'None';
      if (spec.clusterIP !== 'None') {
        const ip = `10.96.${Math.floor(this.#nextClusterIp / 250)}.${(this.#nextClusterIp++ % 250) + 1}`;
        spec.clusterIP = ip;
      }
      spec.clusterIPs = [spec.clusterIP];
      spec.ipFamilies = ['IPv4'];
      spec.ipFamilyPolicy = 'SingleStack';
      spec.internalTrafficPolicy ??= 'Cluster';
      const ports = Array.isArray(spec.ports) ? spec.ports.filter(isObject) : [];
      for (const p of ports) {
        p.protocol ??= 'TCP';
        p.targetPort ??= p.port ?? null;
        if ((spec.type === 'NodePort' || spec.type === 'LoadBalancer') && p.nodePort === undefined) p.nodePort = this.#nextNodePort++;
      }
      obj.status = { loadBalancer: {} };
    } else if (t === T.secrets) {
      secretDefaults(obj);
    } else if (t === T.pods) {
      podDefaults(obj);
    } else if (t === T.deployments) {
      deploymentDefaults(obj);
    } else if (t === T.replicasets) {
      obj.spec ??= {};
      obj.spec.replicas ??= 1;
      obj.status = { replicas: 0 };
    } else if (t === T.statefulsets) {
      statefulSetDefaults(obj);
    } else if (t === T.daemonsets) {
      daemonSetDefaults(obj);
    } else if (t === T.nodes) {
      nodeDefaults(obj, this.#nextNodeIndex++);
    } else if (t === T.persistentvolumeclaims) {
      persistentVolumeClaimDefaults(obj);
    }
  }
}

/** The document a JSON merge, strategic merge or JSON Patch produces from `doc`. */
function patched(doc: JsonObject, body: unknown, type: string): Json {
  if (type === JSON_PATCH) return applyJsonPatch(doc, body);
  if (!isObject(body)) throw badRequest('the patch must be a JSON object');
  return type === MERGE_PATCH ? mergePatch(doc, body) : strategicMerge(doc, body);
}

function secretDefaults(obj: KObject): void {
  obj.type ??= 'Opaque';
  const stringData = obj.stringData;
  if (isObject(stringData)) {
    const data = isObject(obj.data) ? obj.data : {};
    for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(String(v)).toString('base64');
    obj.data = data;
  }
  delete obj.stringData;
}

function out(obj: KObject): JsonObject {
  return clone(obj) as unknown as JsonObject;
}

function scaleOf(_t: ResourceType, obj: KObject): JsonObject {
  const m = obj.metadata;
  const selector = isObject(obj.spec?.selector) && isObject(obj.spec.selector.matchLabels) ? obj.spec.selector.matchLabels : {};
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name: m.name, namespace: m.namespace ?? '', uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp },
    spec: { replicas: obj.spec?.replicas ?? 0 },
    status: {
      replicas: obj.status?.replicas ?? 0,
      selector: Object.entries(selector)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(','),
    },
  };
}
