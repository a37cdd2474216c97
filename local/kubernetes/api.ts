// The REST verbs of kube-apiserver over the store: create with per-kind defaulting (ClusterIP,
// Secret stringData, pod and Deployment defaults), get, list with label/field selectors, replace
// and merge patch with optimistic concurrency, status and scale subresources, and delete with
// namespace and owner cascades. Everything here is synchronous; controllers react afterwards.
import { deploymentDefaults, podDefaults, T } from './controllers.ts';
import {
  apiVersionOf,
  badRequest,
  clone,
  conflict,
  invalid,
  isObject,
  matchesFields,
  matchesLabels,
  mergePatch,
  notFound,
  parseLabelSelector,
  statusObject,
  Store,
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

const MERGE_TYPES = ['application/merge-patch+json', 'application/strategic-merge-patch+json'];

export class Api {
  #nextClusterIp = 10;
  #nextNodePort = 30000;

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

  patch(t: ResourceType, namespace: string | undefined, name: string, body: unknown, contentType: string, sub: Subresource): JsonObject {
    const current = this.store.mustGet(t, namespace, name);
    const type = contentType.split(';')[0]!.trim().toLowerCase();
    if (!MERGE_TYPES.includes(type)) {
      throw new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${MERGE_TYPES.join(', ')} (the simulator supports no JSON Patch or server-side apply)`);
    }
    if (!isObject(body)) throw badRequest('the patch must be a JSON object');
    if (sub === 'scale') {
      const spec = isObject(body.spec) ? body.spec : {};
      return this.#scaleTo(t, current, { spec: { replicas: spec.replicas ?? current.spec?.replicas ?? 1 } });
    }
    const patched = mergePatch(clone(current) as unknown as Json, body as Json) as unknown as KObject;
    const rv = isObject(body.metadata) ? body.metadata.resourceVersion : undefined;
    if (typeof rv === 'string' && rv !== current.metadata.resourceVersion) throw conflict(t, name);
    const obj = this.#incoming(t, namespace, patched, name);
    return out(this.store.update(t, this.#merged(t, current, obj, sub)));
  }

  delete(t: ResourceType, namespace: string | undefined, name: string, query: URLSearchParams, body: unknown): JsonObject {
    const current = this.store.mustGet(t, namespace, name);
    const policy = query.get('propagationPolicy') ?? (isObject(body) && typeof body.propagationPolicy === 'string' ? body.propagationPolicy : 'Background');
    if (policy === 'Orphan') {
      for (const { type, obj } of this.store.all()) {
        const refs = obj.metadata.ownerReferences ?? [];
        if (!refs.some((r) => r.uid === current.metadata.uid)) continue;
        const next = clone(obj);
        next.metadata.ownerReferences = refs.filter((r) => r.uid !== current.metadata.uid);
        this.store.update(type, next);
      }
    }
    if (t === T.namespaces) {
      // Namespace deletion finishes at once here; the real one passes through Terminating.
      for (const { type, obj } of this.store.all()) {
        if (type.namespaced && obj.metadata.namespace === name) this.store.delete(type, name, obj.metadata.name);
      }
    }
    this.store.delete(t, namespace, name);
    if (t === T.pods || t === T.namespaces) {
      const gone = clone(current);
      gone.metadata.deletionTimestamp = timestamp();
      if (t === T.pods) gone.metadata.deletionGracePeriodSeconds = 0;
      else gone.status = { phase: 'Terminating' };
      return out(gone);
    }
    return statusObject('Success', 200, '', '', { name, ...(t.group ? { group: t.group } : {}), kind: t.resource, uid: current.metadata.uid });
  }

  /** Validates an incoming body's shape and identity against the request path. */
  #incoming(t: ResourceType, namespace: string | undefined, body: unknown, name: string | undefined): KObject {
    if (!isObject(body)) throw badRequest(`the body of the request must be a ${t.kind} object`);
    if (body.kind !== undefined && body.kind !== t.kind) throw badRequest(`the kind of the object (${String(body.kind)}) does not match the request (${t.kind})`);
    const obj = clone(body) as unknown as KObject;
    const meta = (isObject(obj.metadata) ? obj.metadata : (obj.metadata = {} as ObjectMeta)) as ObjectMeta;
    if (t.namespaced) {
      if (meta.namespace !== undefined && meta.namespace !== namespace) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      meta.namespace = namespace!;
    }
    if (name !== undefined) {
      if (meta.name !== undefined && meta.name !== name) throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`);
      meta.name = name;
    }
    if (t === T.deployments || t === T.replicasets) {
      const spec = isObject(obj.spec) ? obj.spec : {};
      const selector = structuredSelector(spec.selector);
      if (selector.length === 0) throw invalid(t, meta.name ?? '', 'spec.selector', 'Required value');
      const template = isObject(spec.template) ? spec.template : {};
      const tlabels = isObject(template.metadata) && isObject(template.metadata.labels) ? (template.metadata.labels as Record<string, string>) : {};
      if (!matchesLabels(selector, tlabels)) throw invalid(t, meta.name ?? '', 'spec.template.metadata.labels', '`selector` does not match template `labels`');
      const containers = isObject(template.spec) ? template.spec.containers : undefined;
      if (!Array.isArray(containers) || containers.length === 0) throw invalid(t, meta.name ?? '', 'spec.template.spec.containers', 'Required value');
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
      return next;
    }
    const next = incoming;
    next.metadata = { ...next.metadata, uid: current.metadata.uid, creationTimestamp: current.metadata.creationTimestamp, resourceVersion: current.metadata.resourceVersion };
    if (current.metadata.generation !== undefined) next.metadata.generation = current.metadata.generation;
    if (t.hasStatus) {
      if (current.status !== undefined) next.status = current.status;
      else delete next.status;
    }
    if (t === T.deployments) deploymentDefaults(next);
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
    if (t !== T.deployments && t !== T.replicasets) throw notFound(t, current.metadata.name);
    const spec = isObject(body) && isObject(body.spec) ? body.spec : {};
    if (typeof spec.replicas !== 'number' || spec.replicas < 0) throw invalid(t, current.metadata.name, 'spec.replicas', 'Invalid value: must be greater than or equal to 0');
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
    }
  }
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

function scaleOf(t: ResourceType, obj: KObject): JsonObject {
  const m = obj.metadata;
  const selector = isObject(obj.spec?.selector) && isObject(obj.spec.selector.matchLabels) ? obj.spec.selector.matchLabels : {};
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name: m.name, namespace: m.namespace ?? '', uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp },
    spec: { replicas: obj.spec?.replicas ?? 0 },
    status: {
      replicas: (t === T.deployments || t === T.replicasets ? obj.status?.replicas : 0) ?? 0,
      selector: Object.entries(selector).map(([k, v]) => `${k}=${String(v)}`).join(','),
    },
  };
}
