// Simulated nodes and what decides whether a pod may run on one: the Node objects the simulator
// starts with (Ready, with addresses, capacity and a pod CIDR), the defaults a Node created through
// the API gets, and the scheduler's predicates (readiness, unschedulable, taints and tolerations,
// nodeSelector, required node affinity) shared by the scheduler and the DaemonSet controller.
import { isObject, timestamp, type Json, type JsonObject, type KObject } from './store.ts';

export const DEFAULT_NODES = ['node-1', 'node-2'];

/** A Ready node as a kubelet would register it; `index` picks its addresses and pod CIDR. */
export function nodeObject(name: string, index: number): KObject {
  const node: KObject = { apiVersion: 'v1', kind: 'Node', metadata: { name, uid: '', resourceVersion: '', creationTimestamp: '' } };
  nodeDefaults(node, index);
  return node;
}

/** Fills what a kubelet reports for a node (labels, pod CIDR, Ready status) where it is missing. */
export function nodeDefaults(node: KObject, index: number): void {
  const name = node.metadata.name;
  node.metadata.labels = {
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': 'linux',
    ...(node.metadata.labels ?? {}),
  };
  const spec = node.spec ?? (node.spec = {});
  spec.podCIDR ??= `10.244.${index}.0/24`;
  spec.podCIDRs ??= [spec.podCIDR];
  const now = timestamp();
  const condition = (type: string, status: string, reason: string, message: string): JsonObject => ({
    type,
    status,
    lastHeartbeatTime: now,
    lastTransitionTime: now,
    reason,
    message,
  });
  const capacity = { cpu: '4', 'ephemeral-storage': '102400Mi', memory: '8Gi', pods: '110' };
  node.status = {
    capacity,
    allocatable: capacity,
    conditions: [
      condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
    ],
    addresses: [
      { type: 'InternalIP', address: `172.18.0.${index + 2}` },
      { type: 'Hostname', address: name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      architecture: 'amd64',
      containerRuntimeVersion: 'containerd://1.7.15',
      kernelVersion: '6.5.0',
      kubeProxyVersion: 'v1.30.0-sim',
      kubeletVersion: 'v1.30.0-sim',
      operatingSystem: 'linux',
      osImage: 'Simulated Linux',
      machineID: '',
      systemUUID: '',
      bootID: '',
    },
    ...(isObject(node.status) ? node.status : {}),
  };
}

export function isNodeReady(node: KObject): boolean {
  const conditions = node.status?.conditions;
  return Array.isArray(conditions) && conditions.some((c) => isObject(c) && c.type === 'Ready' && c.status === 'True');
}

export function nodeInternalIp(node: KObject): string {
  const addresses = Array.isArray(node.status?.addresses) ? node.status.addresses.filter(isObject) : [];
  return String(addresses.find((a) => a.type === 'InternalIP')?.address ?? '172.18.0.2');
}

/** The node's pod network prefix, "10.244.1" for podCIDR 10.244.1.0/24. */
export function podNetworkOf(node: KObject): string {
  const m = String(node.spec?.podCIDR ?? '').match(/^(\d+\.\d+\.\d+)\.0\/24$/);
  return m ? m[1]! : '10.244.0';
}

function tolerates(tolerations: JsonObject[], taint: JsonObject): boolean {
  return tolerations.some((t) => {
    const keyMatches = t.key === undefined || t.key === '' ? t.operator === 'Exists' : t.key === taint.key;
    const valueMatches = t.operator === 'Exists' || (t.value ?? '') === (taint.value ?? '');
    const effectMatches = t.effect === undefined || t.effect === '' || t.effect === taint.effect;
    return keyMatches && valueMatches && effectMatches;
  });
}

/** One node selector requirement (matchExpressions on labels, matchFields on metadata.name) against a value, or its absence. */
function requirementHolds(requirement: JsonObject, value: string | undefined): boolean {
  const values = Array.isArray(requirement.values) ? requirement.values.map(String) : [];
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      const [bound] = values;
      if (value === undefined || bound === undefined || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(bound)) return false;
      return requirement.operator === 'Gt' ? Number(value) > Number(bound) : Number(value) < Number(bound);
    }
    default:
      return false;
  }
}

/**
 * spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution: the node must match one
 * of the terms (an empty term matches no node), each term all its requirements. Preferred terms only
 * rank nodes, which the simulator's scheduler does not.
 */
function nodeAffinityHolds(podSpec: JsonObject, node: KObject): boolean {
  const affinity = isObject(podSpec.affinity) && isObject(podSpec.affinity.nodeAffinity) ? podSpec.affinity.nodeAffinity : undefined;
  const required =
    affinity && isObject(affinity.requiredDuringSchedulingIgnoredDuringExecution) ? affinity.requiredDuringSchedulingIgnoredDuringExecution : undefined;
  if (!required) return true;
  const terms = Array.isArray(required.nodeSelectorTerms) ? required.nodeSelectorTerms.filter(isObject) : [];
  const labels = node.metadata.labels ?? {};
  return terms.some((term) => {
    const expressions = Array.isArray(term.matchExpressions) ? term.matchExpressions.filter(isObject) : [];
    const fields = Array.isArray(term.matchFields) ? term.matchFields.filter(isObject) : [];
    if (!expressions.length && !fields.length) return false;
    return (
      expressions.every((e) => requirementHolds(e, Object.hasOwn(labels, String(e.key)) ? String(labels[String(e.key)]) : undefined)) &&
      fields.every((f) => requirementHolds(f, f.key === 'metadata.name' ? node.metadata.name : undefined))
    );
  });
}

/** Whether a pod with this spec may be placed on the node (ignoring readiness, which only the scheduler minds). */
export function podFitsNode(podSpec: JsonObject, node: KObject): boolean {
  const selector = isObject(podSpec.nodeSelector) ? podSpec.nodeSelector : {};
  const labels = node.metadata.labels ?? {};
  if (!Object.entries(selector).every(([k, v]) => labels[k] === v)) return false;
  if (!nodeAffinityHolds(podSpec, node)) return false;
  const tolerations = Array.isArray(podSpec.tolerations) ? podSpec.tolerations.filter(isObject) : [];
  const taints = Array.isArray(node.spec?.taints) ? node.spec.taints.filter(isObject) : [];
  return taints.filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute').every((t) => tolerates(tolerations, t));
}

/** Whether the scheduler would place a new pod there: Ready, schedulable, and the pod fits. */
export function schedulable(podSpec: JsonObject, node: KObject): boolean {
  return isNodeReady(node) && node.spec?.unschedulable !== true && podFitsNode(podSpec, node);
}

/** The tolerations the DaemonSet controller adds to its pods, so they run on troubled nodes too. */
export const DAEMON_TOLERATIONS: Json[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];
