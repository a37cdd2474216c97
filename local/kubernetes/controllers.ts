// What kube-controller-manager and the kubelet would do, in miniature: the Deployment controller
// (ReplicaSet per pod template, RollingUpdate with maxSurge/maxUnavailable, Recreate, status and
// conditions), the ReplicaSet controller (keeps its pod count), a kubelet that starts pods after
// a scaled delay or leaves them in ImagePullBackOff, and owner-reference garbage collection.
// Controllers are level-triggered: every store change queues a reconcile pass, and passes repeat
// until nothing changes, so settled() is simply "no pass queued and no kubelet timer pending".
import { createHash } from 'node:crypto';
import { clone, isObject, matchesLabels, RESOURCES, structuredSelector, timestamp, type Json, type JsonObject, type KObject, type ResourceType, type Store } from './store.ts';

const typeOf = (resource: string): ResourceType => RESOURCES.find((r) => r.resource === resource)!;
export const T = {
  namespaces: typeOf('namespaces'),
  configmaps: typeOf('configmaps'),
  secrets: typeOf('secrets'),
  services: typeOf('services'),
  pods: typeOf('pods'),
  deployments: typeOf('deployments'),
  replicasets: typeOf('replicasets'),
};

/** Unscaled kubelet delays in ms (multiplied by timeScale). */
const POD_START_MS = 1500;
const IMAGE_PULL_FAIL_MS = 1000;
const NODE_NAME = 'sim-node-1';

export interface ControllerOptions {
  timeScale: number;
  /** Whether pulling this image fails (the "invalid" naming rule plus injected faults). */
  imagePullFails: (image: string) => boolean;
  log: (line: string) => void;
}

export class Controllers {
  #passQueued = false;
  #timers = new Set<NodeJS.Timeout>();
  /** Pod uids the kubelet has already taken on. */
  #kubeletSeen = new Set<string>();
  #idle: Array<() => void> = [];
  #closed = false;
  #podIp = 1;

  constructor(private readonly store: Store, private readonly opts: ControllerOptions) {
    store.onChange = () => this.kick();
  }

  get busy(): number {
    return this.#timers.size + (this.#passQueued ? 1 : 0);
  }

  /** Resolves once no reconcile pass is queued and no kubelet timer is pending. */
  settled(): Promise<void> {
    return new Promise((resolve) => {
      this.#idle.push(resolve);
      this.#checkIdle();
    });
  }

  close(): void {
    this.#closed = true;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    this.#passQueued = false;
    this.#checkIdle();
  }

  kick(): void {
    if (this.#passQueued || this.#closed) return;
    this.#passQueued = true;
    setImmediate(() => {
      if (this.#closed) return;
      this.#passQueued = false;
      try {
        this.#pass();
      } catch (err) {
        this.opts.log(`kubernetes simulator: reconcile failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      }
      this.#checkIdle();
    });
  }

  #checkIdle(): void {
    // Re-checked on a later macrotask so a change made between two awaits is not taken for idle.
    setImmediate(() => {
      if (this.busy > 0 && !this.#closed) return;
      const waiters = this.#idle.splice(0);
      for (const w of waiters) w();
    });
  }

  #after(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (this.#closed) return;
      fn();
      this.#checkIdle();
    }, ms * this.opts.timeScale);
    this.#timers.add(timer);
  }

  #pass(): void {
    this.#collectGarbage();
    for (const d of this.store.list(T.deployments)) this.#reconcileDeployment(d);
    for (const rs of this.store.list(T.replicasets)) this.#reconcileReplicaSet(rs);
    for (const pod of this.store.list(T.pods)) this.#kubelet(pod);
    for (const d of this.store.list(T.deployments)) this.#deploymentStatus(d);
  }

  // -------------------------------------------------------------------------------------------
  // Garbage collector: background cascading deletion by owner uid.

  #collectGarbage(): void {
    const all = this.store.all();
    const uids = new Set(all.map((e) => e.obj.metadata.uid));
    for (const { type, obj } of all) {
      const owners = obj.metadata.ownerReferences ?? [];
      if (owners.length > 0 && owners.every((o) => !uids.has(o.uid))) {
        this.store.delete(type, obj.metadata.namespace, obj.metadata.name);
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Deployment controller

  #ownedBy(t: ResourceType, owner: KObject): KObject[] {
    return this.store.list(t, owner.metadata.namespace).filter((o) => (o.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === owner.metadata.uid));
  }

  #replicaSetsOf(d: KObject): KObject[] {
    return this.#ownedBy(T.replicasets, d).sort((a, b) => revision(a) - revision(b));
  }

  #reconcileDeployment(d: KObject): void {
    const spec = d.spec ?? {};
    const want = num(spec.replicas, 1);
    const hash = templateHash(spec.template ?? {});
    const sets = this.#replicaSetsOf(d);
    let newRs = sets.find((rs) => rs.metadata.labels?.['pod-template-hash'] === hash);
    if (!newRs) {
      const rev = Math.max(0, ...sets.map(revision)) + 1;
      newRs = this.#createReplicaSet(d, hash, rev);
    } else if (newRs !== sets[sets.length - 1]) {
      // Rolling back to an older template makes that ReplicaSet the newest revision again.
      const rev = Math.max(...sets.map(revision)) + 1;
      newRs = this.#setReplicas(newRs, num(newRs.spec?.replicas, 0), { 'deployment.kubernetes.io/revision': String(rev) });
    }
    const newUid = newRs.metadata.uid;
    const olds = sets.filter((rs) => rs.metadata.uid !== newUid);
    const activeOlds = olds.filter((rs) => num(rs.spec?.replicas, 0) > 0);
    const strategy = isObject(spec.strategy) ? spec.strategy : {};

    if (activeOlds.length === 0) {
      if (num(newRs.spec?.replicas, 0) !== want) this.#setReplicas(newRs, want);
      return;
    }
    if (strategy.type === 'Recreate') {
      for (const rs of activeOlds) this.#setReplicas(rs, 0);
      return;
    }
    const rolling = isObject(strategy.rollingUpdate) ? strategy.rollingUpdate : {};
    const surge = resolveIntOrPercent(rolling.maxSurge, want, true);
    let maxUnavailable = resolveIntOrPercent(rolling.maxUnavailable, want, false);
    if (surge === 0 && maxUnavailable === 0) maxUnavailable = 1;

    // Scale up the new ReplicaSet as far as maxSurge allows.
    const total = sets.reduce((n, rs) => n + num(rs.spec?.replicas, 0), 0);
    const newReplicas = num(newRs.spec?.replicas, 0);
    if (newReplicas > want) newRs = this.#setReplicas(newRs, want);
    else if (total < want + surge) newRs = this.#setReplicas(newRs, Math.min(want, newReplicas + (want + surge - total)));

    // Scale old ReplicaSets down, unhealthy pods first, never below want - maxUnavailable available.
    const minAvailable = want - maxUnavailable;
    const newUnavailable = num(newRs.spec?.replicas, 0) - this.#readyPods(newRs);
    const allPods = this.#replicaSetsOf(d).reduce((n, rs) => n + num(rs.spec?.replicas, 0), 0);
    let cleanup = allPods - minAvailable - newUnavailable;
    for (const rs of activeOlds) {
      if (cleanup <= 0) break;
      const current = this.store.get(T.replicasets, rs.metadata.namespace, rs.metadata.name)!;
      const replicas = num(current.spec?.replicas, 0);
      const unhealthy = Math.max(0, replicas - this.#readyPods(current));
      const n = Math.min(unhealthy, cleanup);
      if (n > 0) this.#setReplicas(current, replicas - n);
      cleanup -= n;
    }
    const available = this.#replicaSetsOf(d).reduce((n, rs) => n + Math.min(num(rs.spec?.replicas, 0), this.#readyPods(rs)), 0);
    let scaleDown = available - minAvailable;
    for (const rs of activeOlds) {
      if (scaleDown <= 0) break;
      const current = this.store.get(T.replicasets, rs.metadata.namespace, rs.metadata.name)!;
      const replicas = num(current.spec?.replicas, 0);
      const n = Math.min(replicas, scaleDown);
      if (n > 0) this.#setReplicas(current, replicas - n);
      scaleDown -= n;
    }
  }

  #createReplicaSet(d: KObject, hash: string, rev: number): KObject {
    const spec = d.spec ?? {};
    const template = clone(isObject(spec.template) ? spec.template : {});
    const tmeta = isObject(template.metadata) ? template.metadata : (template.metadata = {});
    tmeta.labels = { ...(isObject(tmeta.labels) ? tmeta.labels : {}), 'pod-template-hash': hash };
    const selector = clone(isObject(spec.selector) ? spec.selector : {});
    selector.matchLabels = { ...(isObject(selector.matchLabels) ? selector.matchLabels : {}), 'pod-template-hash': hash };
    const rs: KObject = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${d.metadata.name}-${hash}`,
        namespace: d.metadata.namespace!,
        uid: '',
        resourceVersion: '',
        creationTimestamp: '',
        labels: { ...(tmeta.labels as Record<string, string>) },
        annotations: { 'deployment.kubernetes.io/revision': String(rev), 'deployment.kubernetes.io/desired-replicas': String(num(spec.replicas, 1)) },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name, uid: d.metadata.uid, controller: true, blockOwnerDeletion: true }],
      },
      spec: { replicas: 0, minReadySeconds: num(spec.minReadySeconds, 0), selector, template },
      status: { replicas: 0 },
    };
    return this.store.create(T.replicasets, rs);
  }

  #setReplicas(rs: KObject, replicas: number, annotations?: Record<string, string>): KObject {
    const next = clone(rs);
    next.spec = { ...(next.spec ?? {}), replicas };
    if (annotations) next.metadata.annotations = { ...(next.metadata.annotations ?? {}), ...annotations };
    return this.store.update(T.replicasets, next);
  }

  #readyPods(rs: KObject): number {
    return this.#ownedBy(T.pods, rs).filter(isPodReady).length;
  }

  #deploymentStatus(d: KObject): void {
    const spec = d.spec ?? {};
    const want = num(spec.replicas, 1);
    const hash = templateHash(spec.template ?? {});
    const sets = this.#replicaSetsOf(d);
    const newRs = sets.find((rs) => rs.metadata.labels?.['pod-template-hash'] === hash);
    const pods = sets.flatMap((rs) => this.#ownedBy(T.pods, rs));
    const updated = newRs ? this.#ownedBy(T.pods, newRs).length : 0;
    const ready = pods.filter(isPodReady).length;
    const strategy = isObject(spec.strategy) ? spec.strategy : {};
    const rolling = isObject(strategy.rollingUpdate) ? strategy.rollingUpdate : {};
    const maxUnavailable = strategy.type === 'Recreate' ? 0 : resolveIntOrPercent(rolling.maxUnavailable, want, false);
    const complete = updated === want && pods.length === want && ready === want;
    const prev = d.status ?? {};
    const prevConditions = Array.isArray(prev.conditions) ? prev.conditions.filter(isObject) : [];
    const now = timestamp();
    const condition = (type: string, status: string, reason: string, message: string): JsonObject => {
      const old = prevConditions.find((c) => c.type === type);
      const same = old && old.status === status && old.reason === reason;
      return {
        type,
        status,
        lastUpdateTime: same ? old.lastUpdateTime ?? now : now,
        lastTransitionTime: old && old.status === status ? old.lastTransitionTime ?? now : now,
        reason,
        message,
      };
    };
    const status: JsonObject = {
      observedGeneration: d.metadata.generation ?? 1,
      replicas: pods.length,
      updatedReplicas: updated,
      readyReplicas: ready,
      availableReplicas: ready,
      unavailableReplicas: Math.max(0, want - ready),
      conditions: [
        ready >= want - maxUnavailable
          ? condition('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.')
          : condition('Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.'),
        complete
          ? condition('Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${newRs?.metadata.name ?? ''}" has successfully progressed.`)
          : condition('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${newRs?.metadata.name ?? ''}" is progressing.`),
      ],
    };
    for (const k of ['updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas', 'replicas']) if (status[k] === 0) delete status[k];
    const next = clone(d);
    next.status = status;
    if (newRs) next.metadata.annotations = { ...(next.metadata.annotations ?? {}), 'deployment.kubernetes.io/revision': String(revision(newRs)) };
    this.store.update(T.deployments, next);
  }

  // -------------------------------------------------------------------------------------------
  // ReplicaSet controller

  #reconcileReplicaSet(rs: KObject): void {
    const want = num(rs.spec?.replicas, 1);
    const pods = this.#ownedBy(T.pods, rs);
    if (pods.length < want) {
      for (let i = pods.length; i < want; i++) this.#createPod(rs);
    } else if (pods.length > want) {
      // Like the real controller: unready pods go first, then the youngest.
      const victims = pods.sort((a, b) => Number(isPodReady(a)) - Number(isPodReady(b)) || b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp)).slice(0, pods.length - want);
      for (const p of victims) this.store.delete(T.pods, p.metadata.namespace, p.metadata.name);
    }
    const current = this.#ownedBy(T.pods, rs);
    const selector = structuredSelector(rs.spec?.selector);
    const ready = current.filter(isPodReady).length;
    const status: JsonObject = {
      replicas: current.length,
      fullyLabeledReplicas: current.filter((p) => matchesLabels(selector, p.metadata.labels)).length,
      readyReplicas: ready,
      availableReplicas: ready,
      observedGeneration: rs.metadata.generation ?? 1,
    };
    for (const k of ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas']) if (status[k] === 0) delete status[k];
    const fresh = this.store.get(T.replicasets, rs.metadata.namespace, rs.metadata.name);
    if (fresh) this.store.update(T.replicasets, { ...clone(fresh), status });
  }

  #createPod(rs: KObject): void {
    const template = isObject(rs.spec?.template) ? clone(rs.spec.template) : {};
    const tmeta = isObject(template.metadata) ? template.metadata : {};
    const pod: KObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: '',
        generateName: `${rs.metadata.name}-`,
        namespace: rs.metadata.namespace!,
        uid: '',
        resourceVersion: '',
        creationTimestamp: '',
        labels: (isObject(tmeta.labels) ? tmeta.labels : {}) as Record<string, string>,
        ...(isObject(tmeta.annotations) ? { annotations: tmeta.annotations as Record<string, string> } : {}),
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs.metadata.name, uid: rs.metadata.uid, controller: true, blockOwnerDeletion: true }],
      },
      spec: isObject(template.spec) ? template.spec : {},
    };
    podDefaults(pod);
    this.store.create(T.pods, pod);
  }

  // -------------------------------------------------------------------------------------------
  // Kubelet: Pending -> Running/Ready, or Pending with ImagePullBackOff.

  #kubelet(pod: KObject): void {
    const uid = pod.metadata.uid;
    if (this.#kubeletSeen.has(uid) || pod.status?.phase !== 'Pending') return;
    this.#kubeletSeen.add(uid);
    const containers = containersOf(pod);
    const failing = containers.find((c) => this.opts.imagePullFails(String(c.image ?? '')));
    this.#after(failing ? IMAGE_PULL_FAIL_MS : POD_START_MS, () => {
      const current = this.store.get(T.pods, pod.metadata.namespace, pod.metadata.name);
      if (!current || current.metadata.uid !== uid) return;
      const next = clone(current);
      const now = timestamp();
      const status = next.status ?? {};
      if (failing) {
        status.containerStatuses = containers.map((c) => {
          const image = String(c.image ?? '');
          const bad = this.opts.imagePullFails(image);
          return {
            name: String(c.name ?? ''),
            image,
            imageID: '',
            ready: false,
            restartCount: 0,
            started: false,
            state: (bad
              ? { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}"` } }
              : { waiting: { reason: 'PodInitializing' } }) as JsonObject,
            lastState: {},
          };
        });
        status.conditions = [
          ...conditionsExcept(status, ['Ready', 'ContainersReady', 'Initialized']),
          { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: now },
          { type: 'Ready', status: 'False', lastProbeTime: null, lastTransitionTime: now, reason: 'ContainersNotReady', message: `containers with unready status: [${containers.map((c) => String(c.name)).join(' ')}]` },
          { type: 'ContainersReady', status: 'False', lastProbeTime: null, lastTransitionTime: now, reason: 'ContainersNotReady', message: `containers with unready status: [${containers.map((c) => String(c.name)).join(' ')}]` },
        ];
      } else {
        status.phase = 'Running';
        status.podIP = `10.244.0.${(this.#podIp++ % 250) + 2}`;
        status.podIPs = [{ ip: status.podIP }];
        status.startTime = now;
        status.containerStatuses = containers.map((c) => ({
          name: String(c.name ?? ''),
          image: String(c.image ?? ''),
          imageID: `${String(c.image ?? '')}@sha256:${createHash('sha256').update(String(c.image ?? '')).digest('hex')}`,
          containerID: `containerd://${createHash('sha256').update(`${uid}/${String(c.name)}`).digest('hex')}`,
          ready: true,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: now } },
          lastState: {},
        }));
        status.conditions = [
          ...conditionsExcept(status, ['Ready', 'ContainersReady', 'Initialized']),
          { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: now },
          { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: now },
          { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: now },
        ];
      }
      next.status = status;
      this.store.update(T.pods, next);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Defaulting shared by the API handlers and the controllers

/** What the API server and scheduler fill into a new pod: node, phase Pending, PodScheduled. */
export function podDefaults(pod: KObject): void {
  const spec = pod.spec ?? (pod.spec = {});
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.nodeName ??= NODE_NAME;
  if (Array.isArray(spec.containers)) {
    for (const c of spec.containers) if (isObject(c)) c.imagePullPolicy ??= String(c.image ?? '').endsWith(':latest') || !String(c.image ?? '').includes(':') ? 'Always' : 'IfNotPresent';
  }
  pod.status = {
    phase: 'Pending',
    conditions: [{ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: timestamp() }],
    hostIP: '172.18.0.2',
    qosClass: 'BestEffort',
  };
}

export function deploymentDefaults(d: KObject): void {
  const spec = d.spec ?? (d.spec = {});
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  const strategy = isObject(spec.strategy) ? spec.strategy : (spec.strategy = {});
  strategy.type ??= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = isObject(strategy.rollingUpdate) ? strategy.rollingUpdate : (strategy.rollingUpdate = {});
    ru.maxSurge ??= '25%';
    ru.maxUnavailable ??= '25%';
  }
  d.status ??= {};
}

export function isPodReady(pod: KObject): boolean {
  const conditions = pod.status?.conditions;
  return pod.status?.phase === 'Running' && Array.isArray(conditions) && conditions.some((c) => isObject(c) && c.type === 'Ready' && c.status === 'True');
}

function containersOf(pod: KObject): JsonObject[] {
  const c = pod.spec?.containers;
  return Array.isArray(c) ? c.filter(isObject) : [];
}

function conditionsExcept(status: JsonObject, types: string[]): Json[] {
  return (Array.isArray(status.conditions) ? status.conditions : []).filter((c) => !(isObject(c) && types.includes(String(c.type))));
}

function num(v: Json | undefined, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

function revision(rs: KObject): number {
  return Number(rs.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? 0);
}

/** intstr like "25%" or 1; surge rounds up and unavailability rounds down, as upstream does. */
function resolveIntOrPercent(v: Json | undefined, total: number, roundUp: boolean): number {
  if (typeof v === 'number') return v;
  const m = typeof v === 'string' ? v.match(/^(\d+)%$/) : null;
  const pct = m ? Number(m[1]) : 25;
  const exact = (pct * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/** A stable 10-character hash of the pod template, in the alphabet upstream's SafeEncodeString uses. */
export function templateHash(template: Json): string {
  const digest = createHash('sha256').update(JSON.stringify(template)).digest();
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let s = '';
  for (let i = 0; i < 10; i++) s += alphabet[digest[i]! % alphabet.length];
  return s;
}

