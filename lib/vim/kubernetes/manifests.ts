// The Kubernetes objects a CNF is made of: the package's manifest files that the InstantiateVnfRequest
// names in additionalParams["lcm-kubernetes-def-files"], checked (declared artifacts that exist),
// parsed as untrusted multi-document YAML, and prepared for one VNF instance: its namespace, its
// label on every object and pod template, the VDUs' replica counts, and the order to apply them in.
import { createHash } from 'node:crypto';
import type { FlavourInfo } from '#lib/packages/vnfd/model.ts';
import { parseSafeYaml, UnsafeYamlError, VNFD_LIMITS } from '#lib/yaml.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { PackageFiles } from '#lib/vim/driver.ts';
import { isRecord as isObj } from '#lib/json.ts';

export const DEF_FILES_PARAM = 'lcm-kubernetes-def-files';
/** The label every object of a VNF instance carries, so terminate finds them without a driver state. */
export const VNF_INSTANCE_LABEL = 'vnf-instance-id';

type Json = Record<string, unknown>;

export interface ManifestObject {
  apiVersion: string;
  kind: string;
  metadata: Json & { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

/** Workload kinds: their pods are a VDU's VNFCs, and they are what instantiate waits for. */
export const WORKLOAD_KINDS: ReadonlySet<string> = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Pod']);
/** Workloads with spec.replicas, the ones a VDU's instance count (and SCALE) applies to. */
export const REPLICATED_KINDS: ReadonlySet<string> = new Set(['Deployment', 'StatefulSet', 'ReplicaSet']);

/** Kinds without a namespace; any kind not listed is taken to be namespaced. */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'PersistentVolume',
  'StorageClass',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'PriorityClass',
  'IngressClass',
  'RuntimeClass',
  'CSIDriver',
  'APIService',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
]);
export const isClusterScoped = (kind: string): boolean => CLUSTER_SCOPED.has(kind);

/**
 * The order objects are applied in (and removed in, reversed), as Helm orders them: what pods
 * mount or run as exists before the pods. Kinds not listed (custom resources, Ingress, HPA) go last.
 */
const APPLY_RANK: Record<string, number> = {
  Namespace: 0,
  NetworkPolicy: 1,
  ResourceQuota: 1,
  LimitRange: 1,
  PodDisruptionBudget: 1,
  PriorityClass: 1,
  ServiceAccount: 2,
  Secret: 2,
  ConfigMap: 2,
  StorageClass: 2,
  PersistentVolume: 2,
  PersistentVolumeClaim: 2,
  CustomResourceDefinition: 2,
  ClusterRole: 2,
  ClusterRoleBinding: 2,
  Role: 2,
  RoleBinding: 2,
  Service: 3,
  DaemonSet: 4,
  Pod: 4,
  ReplicaSet: 4,
  Deployment: 4,
  StatefulSet: 4,
  Job: 4,
  CronJob: 4,
};
export const applyRank = (kind: string): number => APPLY_RANK[kind] ?? 5;

/** The value of VNF_INSTANCE_LABEL for an instance: its id when that is a valid label value (a UUID is), else a digest of it. */
export function instanceLabelValue(vnfInstanceId: string): string {
  if (/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(vnfInstanceId) && vnfInstanceId.length <= 63) return vnfInstanceId;
  return `h-${createHash('sha256').update(vnfInstanceId).digest('hex').slice(0, 40)}`;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const additionalParamsOf = (request: Record<string, unknown>): Json => (isObj(request.additionalParams) ? request.additionalParams : {});

/** The package paths of the manifests the request names, in the order given. */
export function defFilesOf(request: Record<string, unknown>): string[] {
  const value = additionalParamsOf(request)[DEF_FILES_PARAM];
  if (!Array.isArray(value) || value.length === 0 || !value.every((path) => typeof path === 'string' && path.trim() !== '')) {
    throw new UnprocessableEntityError(`additionalParams["${DEF_FILES_PARAM}"] must list the package paths of the Kubernetes manifests to instantiate`);
  }
  return (value as string[]).map((path) => path.trim().replace(/^\.?\//, ''));
}

/** Reads and parses the manifests, refusing paths the package does not declare as artifacts or does not hold. */
export async function readManifests(files: PackageFiles, paths: string[]): Promise<ManifestObject[]> {
  const declared = new Set(await files.artifacts());
  const present = new Set(await files.list());
  const undeclared = paths.filter((path) => !declared.has(path));
  if (undeclared.length) {
    throw new UnprocessableEntityError(
      `additionalParams["${DEF_FILES_PARAM}"] names ${undeclared.join(', ')}, which the VNF package does not declare as artifacts (with a checksum in its manifest or TOSCA.meta)`,
    );
  }
  const missing = paths.filter((path) => !present.has(path));
  if (missing.length)
    throw new UnprocessableEntityError(`additionalParams["${DEF_FILES_PARAM}"] names ${missing.join(', ')}, which the VNF package does not contain`);
  const objects: ManifestObject[] = [];
  for (const path of paths) {
    const bytes = await files.size(path);
    if (bytes > VNFD_LIMITS.maxFileBytes)
      throw new UnprocessableEntityError(`${path}: is ${bytes} bytes; a Kubernetes manifest may have at most ${VNFD_LIMITS.maxFileBytes} bytes`);
    objects.push(...parseManifest((await files.read(path)).toString('utf8'), path));
  }
  const seen = new Set<string>();
  for (const object of objects) {
    const key = `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    if (seen.has(key)) throw new UnprocessableEntityError(`the manifests define ${object.kind} ${object.metadata.name} twice`);
    seen.add(key);
  }
  return objects;
}

/** A line that holds no YAML node: blank, a comment, a directive, a document end marker. */
const EMPTY_LINE = /^[ \t]*(?:#.*|%.*|\.\.\.[ \t]*)?\r?$/;
const isEmptyDocument = (chunk: string): boolean => chunk.split('\n').every((line) => EMPTY_LINE.test(line));

/**
 * The objects of one multi-document YAML file. Each document goes through the VNFD's hardened
 * parser (bounded size, depth and aliases, so no alias bomb; no tags; no duplicate keys). A
 * document marker at column 0 always starts a document (YAML 1.2 forbids one inside a scalar),
 * which makes splitting on it exact.
 */
export function parseManifest(text: string, path: string): ManifestObject[] {
  const chunks = text.split(/^---(?=[ \t\r]|$)/m);
  const documents = chunks.filter((chunk) => !isEmptyDocument(chunk));
  const objects: ManifestObject[] = [];
  documents.forEach((chunk, index) => {
    const where = documents.length > 1 ? `${path} (document ${index + 1})` : path;
    let value: unknown;
    try {
      value = parseSafeYaml(chunk, where);
    } catch (error) {
      if (error instanceof UnsafeYamlError) throw new UnprocessableEntityError(`${error.where ?? where}: ${error.message}`);
      throw error;
    }
    if (value === null || value === undefined) return;
    const items = isObj(value) && typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items) ? value.items : [value];
    for (const item of items) objects.push(manifestObject(item, where));
  });
  return objects;
}

function manifestObject(value: unknown, where: string): ManifestObject {
  if (!isObj(value))
    throw new UnprocessableEntityError(`${where}: a Kubernetes manifest document must be an object, not ${Array.isArray(value) ? 'a list' : typeof value}`);
  const { apiVersion, kind, metadata } = value;
  if (typeof apiVersion !== 'string' || !apiVersion || typeof kind !== 'string' || !kind) {
    throw new UnprocessableEntityError(`${where}: every Kubernetes object needs apiVersion and kind`);
  }
  if (!isObj(metadata) || typeof metadata.name !== 'string' || !metadata.name) {
    // generateName is refused: a retried step and terminate must find the object by its name.
    throw new UnprocessableEntityError(`${where}: ${kind} has no metadata.name (generateName is not supported)`);
  }
  if (metadata.namespace !== undefined && typeof metadata.namespace !== 'string')
    throw new UnprocessableEntityError(`${where}: ${kind} ${metadata.name}: metadata.namespace must be a string`);
  if (metadata.labels !== undefined && !isObj(metadata.labels))
    throw new UnprocessableEntityError(`${where}: ${kind} ${metadata.name}: metadata.labels must be a mapping`);
  return value as ManifestObject;
}

/**
 * The namespace of the VNF: the request's additionalParams.namespace (which wins over what the
 * manifests say), else the one the manifests name, else "default". One VNF lives in one namespace,
 * so manifests naming several are refused.
 */
export function namespaceOf(request: Record<string, unknown>, objects: ManifestObject[]): string {
  const requested = additionalParamsOf(request).namespace;
  if (requested !== undefined && (typeof requested !== 'string' || !DNS_LABEL.test(requested) || requested.length > 63)) {
    throw new UnprocessableEntityError(`additionalParams.namespace must be a Kubernetes namespace name (a DNS label), not ${JSON.stringify(requested)}`);
  }
  const named = [
    ...new Set(objects.filter((object) => !isClusterScoped(object.kind) && object.metadata.namespace).map((object) => object.metadata.namespace as string)),
  ];
  if (named.length > 1)
    throw new UnprocessableEntityError(`the manifests put objects in several namespaces (${named.join(', ')}); the objects of a VNF share one namespace`);
  return (requested as string | undefined) ?? named[0] ?? 'default';
}

/** The workload a VDU is: the one whose metadata.name is the VDU's name. */
export function workloadOf(objects: ManifestObject[], vduName: string): ManifestObject | undefined {
  const found = objects.filter((object) => WORKLOAD_KINDS.has(object.kind) && object.metadata.name === vduName);
  if (found.length > 1)
    throw new UnprocessableEntityError(
      `the manifests have several workloads named ${vduName} (${found.map((object) => object.kind).join(', ')}); a VDU's name must name exactly one`,
    );
  return found[0];
}

/**
 * The flavour's VDUs whose workload the manifests do not hold. An instantiate deploys what the
 * manifests hold and skips these, as Tacker does (a VNFD may describe more VDUs than the chosen
 * lcm-kubernetes-def-files deploy); with none of the VDUs there, there is nothing to instantiate.
 */
export function vdusWithoutWorkload(flavour: FlavourInfo, objects: ManifestObject[]): Array<{ id: string; name: string }> {
  const missing = flavour.vdus.filter((vdu) => !workloadOf(objects, vdu.name));
  if (flavour.vdus.length && missing.length === flavour.vdus.length) {
    throw new UnprocessableEntityError(
      `the manifests deploy none of the VDUs of flavour ${flavour.flavourId} (no ${[...WORKLOAD_KINDS].join('/')} named ${missing.map((vdu) => vdu.name).join(', ')})`,
    );
  }
  return missing;
}

/** Checks that every VDU of the flavour has its workload in the manifests. */
export function checkVdus(flavour: FlavourInfo, objects: ManifestObject[]): void {
  for (const vdu of flavour.vdus) {
    if (!workloadOf(objects, vdu.name)) {
      throw new UnprocessableEntityError(
        `VDU ${vdu.id} of flavour ${flavour.flavourId} is named ${vdu.name}, but the manifests have no ${[...WORKLOAD_KINDS].join('/')} of that name`,
      );
    }
  }
}

export interface PrepareOptions {
  namespace: string;
  labelValue: string;
  /** Workload name -> replicas (the VDUs' instance counts). */
  replicas: ReadonlyMap<string, number>;
  /** Workload name (the VDU's name) -> the zone the grant places its pods in. */
  zones?: Readonly<Record<string, string>>;
}

/** The well-known node label of a node's zone (Kubernetes topology.kubernetes.io/zone). */
export const ZONE_LABEL = 'topology.kubernetes.io/zone';

/**
 * A pod spec whose pods may only run on nodes of `zone`: a required node affinity on the zone label,
 * added to each of the manifest's own node selector terms (terms are alternatives, so every one must
 * hold the zone), or as the one term when the manifest has none.
 */
export function withZoneAffinity(podSpec: unknown, zone: string): Json {
  const spec: Json = isObj(podSpec) ? { ...podSpec } : {};
  const affinity: Json = isObj(spec.affinity) ? { ...spec.affinity } : {};
  const nodeAffinity: Json = isObj(affinity.nodeAffinity) ? { ...affinity.nodeAffinity } : {};
  const required: Json = isObj(nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution)
    ? { ...nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution }
    : {};
  const expression = { key: ZONE_LABEL, operator: 'In', values: [zone] };
  const terms = Array.isArray(required.nodeSelectorTerms) && required.nodeSelectorTerms.length ? required.nodeSelectorTerms : [{}];
  required.nodeSelectorTerms = terms.map((term: unknown) => {
    const own = isObj(term) ? term : {};
    const expressions = (Array.isArray(own.matchExpressions) ? own.matchExpressions : []).filter(
      (candidate: unknown) => !(isObj(candidate) && candidate.key === ZONE_LABEL),
    );
    return { ...own, matchExpressions: [...expressions, expression] };
  });
  nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = required;
  affinity.nodeAffinity = nodeAffinity;
  spec.affinity = affinity;
  return spec;
}

/** A workload (or bare Pod) whose pods are placed in `zone`. */
function placed(object: ManifestObject, spec: Json, zone: string): void {
  if (object.kind === 'Pod') {
    Object.assign(spec, withZoneAffinity(spec, zone));
  } else if (isObj(spec.template)) {
    spec.template = { ...spec.template, spec: withZoneAffinity(spec.template.spec, zone) };
  }
}

function labelled(metadata: unknown, label: string): Json {
  const meta = isObj(metadata) ? { ...metadata } : {};
  meta.labels = { ...(isObj(meta.labels) ? meta.labels : {}), [VNF_INSTANCE_LABEL]: label };
  return meta;
}

/** A pod template (or PVC template) with the instance label added to its metadata. */
function labelTemplate(template: unknown, label: string): unknown {
  return isObj(template) ? { ...template, metadata: labelled(template.metadata, label) } : template;
}

/**
 * Copies of the objects as this VNF applies them, in apply order: namespaced ones in the VNF's
 * namespace, every object, pod template and volume claim template labelled with the instance,
 * and the VDUs' workloads at their instance counts, their pods in the zones the grant chose.
 */
export function prepareObjects(objects: ManifestObject[], options: PrepareOptions): ManifestObject[] {
  const prepared = objects.map((original) => {
    const object = structuredClone(original);
    object.metadata = labelled(object.metadata, options.labelValue) as ManifestObject['metadata'];
    if (isClusterScoped(object.kind)) delete object.metadata.namespace;
    else object.metadata.namespace = options.namespace;
    const spec = isObj(object.spec) ? { ...object.spec } : undefined;
    if (spec) {
      if (isObj(spec.template)) spec.template = labelTemplate(spec.template, options.labelValue);
      if (Array.isArray(spec.volumeClaimTemplates))
        spec.volumeClaimTemplates = spec.volumeClaimTemplates.map((claim) => labelTemplate(claim, options.labelValue));
      if (object.kind === 'CronJob' && isObj(spec.jobTemplate)) {
        const job = labelTemplate(spec.jobTemplate, options.labelValue) as Json;
        if (isObj(job.spec) && isObj(job.spec.template)) job.spec = { ...job.spec, template: labelTemplate(job.spec.template, options.labelValue) };
        spec.jobTemplate = job;
      }
      const replicas = options.replicas.get(object.metadata.name);
      if (REPLICATED_KINDS.has(object.kind) && replicas !== undefined) spec.replicas = replicas;
      const zone = options.zones && Object.hasOwn(options.zones, object.metadata.name) ? options.zones[object.metadata.name] : undefined;
      if (zone !== undefined && WORKLOAD_KINDS.has(object.kind)) placed(object, spec, zone);
      object.spec = spec;
    }
    return object;
  });
  // Array.prototype.sort is stable: objects of one rank keep the order the manifests give them.
  return prepared.sort((a, b) => applyRank(a.kind) - applyRank(b.kind));
}
