// What kube-controller-manager, the scheduler and the kubelet would do, in miniature: the
// Deployment controller (ReplicaSet per pod template, RollingUpdate with maxSurge/maxUnavailable,
// Recreate, status and conditions), the ReplicaSet controller (keeps its pod count), the
// StatefulSet and DaemonSet controllers (workloads.ts), a scheduler spreading pods over the Ready
// nodes, a kubelet that starts pods after a scaled delay or leaves them in ImagePullBackOff, and
// the garbage collector (owner references, foreground and orphan deletion, pods of vanished nodes).
// Controllers are level-triggered: every store change queues a reconcile pass, and passes repeat
// until nothing changes, so settled() is simply "no pass queued and no kubelet timer pending".
import { createHash } from 'node:crypto';
import { containersOf, controllerRef, isPodReady, num, podFromTemplate, resolveIntOrPercent, T, templateHash } from './defaults.ts';
import { isNodeReady, nodeInternalIp, podNetworkOf, schedulable } from './nodes.ts';
import {
  clone,
  isObject,
  matchesLabels,
  structuredSelector,
  timestamp,
  type Json,
  type JsonObject,
  type KObject,
  type ResourceType,
  type Store,
} from './store.ts';
import { reconcileDaemonSet, reconcileStatefulSet, type WorkloadContext } from './workloads.ts';

export { T } from './defaults.ts';

/** Unscaled kubelet delays in ms (multiplied by timeScale). */
const POD_START_MS = 1500;
const IMAGE_PULL_FAIL_MS = 1000;

export interface ControllerOptions {
  timeScale: number;
  /** Whether pulling this image fails (the "invalid"/"badimage" naming rule plus injected faults). */
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
  readonly #workloads: WorkloadContext;

  constructor(
    private readonly store: Store,
    private readonly opts: ControllerOptions,
  ) {
    store.onChange = () => this.kick();
    this.#workloads = { store, ownedBy: (t, owner) => this.#ownedBy(t, owner), adopt: (owner, t, accept) => this.#adopt(owner, t, accept) };
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
      this.#pass();
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
    this.#guarded('garbage collector', () => this.#collectGarbage());
    for (const d of this.store.list(T.deployments)) this.#guarded(`deployment ${d.metadata.name}`, () => this.#reconcileDeployment(d));
    for (const rs of this.store.list(T.replicasets)) this.#guarded(`replicaset ${rs.metadata.name}`, () => this.#reconcileReplicaSet(rs));
    for (const sts of this.store.list(T.statefulsets)) this.#guarded(`statefulset ${sts.metadata.name}`, () => reconcileStatefulSet(this.#workloads, sts));
    const nodes = this.store.list(T.nodes);
    for (const ds of this.store.list(T.daemonsets)) this.#guarded(`daemonset ${ds.metadata.name}`, () => reconcileDaemonSet(this.#workloads, ds, nodes));
    this.#guarded('scheduler', () => this.#schedule(nodes));
    for (const pod of this.store.list(T.pods)) this.#guarded(`kubelet ${pod.metadata.name}`, () => this.#kubelet(pod));
    for (const d of this.store.list(T.deployments)) this.#guarded(`deployment status ${d.metadata.name}`, () => this.#deploymentStatus(d));
  }

  /** One controller's failure (say, a pod name another owner holds) is logged and does not stop the others. */
  #guarded(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.opts.log(`kubernetes simulator: ${what}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Takes over objects matching the owner's selector that have no controller, as upstream's ControllerRefManager does. */
  #adopt(owner: KObject, t: ResourceType, accept: (o: KObject) => boolean = () => true): void {
    const selector = structuredSelector(owner.spec?.selector);
    if (owner.metadata.deletionTimestamp || selector.length === 0) return;
    for (const o of this.store.list(t, owner.metadata.namespace)) {
      if (
        o.metadata.deletionTimestamp ||
        (o.metadata.ownerReferences ?? []).some((r) => r.controller) ||
        !matchesLabels(selector, o.metadata.labels) ||
        !accept(o)
      )
        continue;
      const next = clone(o);
      next.metadata.ownerReferences = [...(next.metadata.ownerReferences ?? []), controllerRef(owner)];
      this.store.update(t, next);
    }
  }

  #ownedBy(t: ResourceType, owner: KObject): KObject[] {
    return this.store
      .list(t, owner.metadata.namespace)
      .filter((o) => (o.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === owner.metadata.uid));
  }

  // -------------------------------------------------------------------------------------------
  // Garbage collector: dependants of vanished owners, the orphan and foregroundDeletion
  // finalizers, and (as the pod GC does) pods bound to nodes that no longer exist.

  #collectGarbage(): void {
    const all = this.store.all();
    const uids = new Set(all.map((e) => e.obj.metadata.uid));
    const dependantsOf = (uid: string) => this.store.all().filter((e) => (e.obj.metadata.ownerReferences ?? []).some((r) => r.uid === uid));
    const withoutFinalizer = (type: ResourceType, obj: KObject, finalizer: string) => {
      const next = clone(obj);
      next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== finalizer);
      this.store.update(type, next);
    };
    for (const { type, obj: seen } of all) {
      const obj = this.store.get(type, seen.metadata.namespace, seen.metadata.name);
      if (!obj || obj.metadata.uid !== seen.metadata.uid) continue;
      const owners = obj.metadata.ownerReferences ?? [];
      if (owners.length > 0 && owners.every((o) => !uids.has(o.uid))) {
        if (!obj.metadata.deletionTimestamp) this.store.beginDelete(type, obj);
        continue;
      }
      if (!obj.metadata.deletionTimestamp) continue;
      const finalizers = obj.metadata.finalizers ?? [];
      if (finalizers.includes('orphan')) {
        for (const dep of dependantsOf(obj.metadata.uid)) {
          const next = clone(dep.obj);
          next.metadata.ownerReferences = (next.metadata.ownerReferences ?? []).filter((r) => r.uid !== obj.metadata.uid);
          if (next.metadata.ownerReferences.length === 0) delete next.metadata.ownerReferences;
          this.store.update(dep.type, next);
        }
        withoutFinalizer(type, obj, 'orphan');
      } else if (finalizers.includes('foregroundDeletion')) {
        // Dependants go first (in the foreground too when they have dependants of their own), the owner last.
        for (const dep of dependantsOf(obj.metadata.uid)) {
          if (!dep.obj.metadata.deletionTimestamp)
            this.store.beginDelete(dep.type, dep.obj, dependantsOf(dep.obj.metadata.uid).length > 0 ? 'foregroundDeletion' : undefined);
        }
        const fresh = this.store.get(type, obj.metadata.namespace, obj.metadata.name);
        if (fresh && dependantsOf(obj.metadata.uid).length === 0) withoutFinalizer(type, fresh, 'foregroundDeletion');
      }
    }
    const nodes = new Set(this.store.list(T.nodes).map((n) => n.metadata.name));
    for (const pod of this.store.list(T.pods)) {
      const node = pod.spec?.nodeName;
      if (typeof node === 'string' && node !== '' && !nodes.has(node)) this.store.delete(T.pods, pod.metadata.namespace, pod.metadata.name);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Deployment controller

  #replicaSetsOf(d: KObject): KObject[] {
    return this.#ownedBy(T.replicasets, d).sort((a, b) => revision(a) - revision(b));
  }

  #reconcileDeployment(d: KObject): void {
    // A Deployment being deleted only reports status; its ReplicaSets are the garbage collector's.
    if (d.metadata.deletionTimestamp) return;
    this.#adopt(d, T.replicasets);
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
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name, uid: d.metadata.uid, controller: true, blockOwnerDeletion: true },
        ],
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
        lastUpdateTime: same ? (old.lastUpdateTime ?? now) : now,
        lastTransitionTime: old && old.status === status ? (old.lastTransitionTime ?? now) : now,
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
    this.#adopt(rs, T.pods);
    const want = num(rs.spec?.replicas, 1);
    const pods = this.#ownedBy(T.pods, rs);
    if (rs.metadata.deletionTimestamp) {
      // Being deleted: no pods made or removed, status only.
    } else if (pods.length < want) {
      for (let i = pods.length; i < want; i++) this.#createPod(rs);
    } else if (pods.length > want) {
      // Like the real controller: unready pods go first, then those with the lowest
      // controller.kubernetes.io/pod-deletion-cost (Kubernetes >= 1.22), then the youngest.
      const cost = (pod: KObject): number => Number(pod.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost'] ?? 0) || 0;
      const victims = pods
        .sort(
          (a, b) =>
            Number(isPodReady(a)) - Number(isPodReady(b)) || cost(a) - cost(b) || b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp),
        )
        .slice(0, pods.length - want);
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
    this.store.create(T.pods, podFromTemplate(rs, rs.spec?.template, { generateName: `${rs.metadata.name}-` }));
  }

  // -------------------------------------------------------------------------------------------
  // Scheduler: binds pending pods to the Ready node with the fewest pods, or marks them Unschedulable.

  #schedule(nodes: KObject[]): void {
    const pods = this.store.list(T.pods);
    const load = new Map<string, number>(nodes.map((n) => [n.metadata.name, 0]));
    for (const p of pods) if (typeof p.spec?.nodeName === 'string') load.set(p.spec.nodeName, (load.get(p.spec.nodeName) ?? 0) + 1);
    for (const pod of pods) {
      if (pod.metadata.deletionTimestamp || pod.status?.phase !== 'Pending') continue;
      const status = pod.status;
      const scheduled = (Array.isArray(status.conditions) ? status.conditions.filter(isObject) : []).find((c) => c.type === 'PodScheduled');
      const next = clone(pod);
      const setScheduled = (condition: JsonObject) => {
        next.status = {
          ...(next.status ?? {}),
          conditions: [
            ...conditionsExcept(next.status ?? {}, ['PodScheduled']),
            { type: 'PodScheduled', lastProbeTime: null, lastTransitionTime: timestamp(), ...condition },
          ],
        };
        this.store.update(T.pods, next);
      };
      if (typeof pod.spec?.nodeName === 'string' && pod.spec.nodeName !== '') {
        if (scheduled?.status !== 'True') setScheduled({ status: 'True' });
        continue;
      }
      const node = nodes
        .filter((n) => schedulable(pod.spec ?? {}, n))
        .sort((a, b) => load.get(a.metadata.name)! - load.get(b.metadata.name)! || a.metadata.name.localeCompare(b.metadata.name))[0];
      if (!node) {
        const message = `0/${nodes.length} nodes are available: ${nodes.length === 0 ? 'no nodes available to schedule pods' : `${nodes.length} node(s) didn't match Pod's node affinity/selector, were not ready or had untolerated taints`}.`;
        if (scheduled?.status !== 'False' || scheduled.message !== message) setScheduled({ status: 'False', reason: 'Unschedulable', message });
        continue;
      }
      next.spec = { ...(next.spec ?? {}), nodeName: node.metadata.name };
      load.set(node.metadata.name, load.get(node.metadata.name)! + 1);
      setScheduled({ status: 'True' });
    }
  }

  /**
   * The pod's containers keep crashing: Running but not Ready, each container waiting in
   * CrashLoopBackOff. As on a real cluster, no controller replaces the pod for it; only deleting the
   * pod (a heal) makes its ReplicaSet create a fresh one. False when there is no such pod.
   */
  crashPod(namespace: string, name: string): boolean {
    const current = this.store.get(T.pods, namespace, name);
    if (!current || current.metadata.deletionTimestamp) return false;
    const next = clone(current);
    const now = timestamp();
    const status = next.status ?? {};
    const containers = containersOf(current);
    status.phase = 'Running';
    status.containerStatuses = containers.map((c) => ({
      name: String(c.name ?? ''),
      image: String(c.image ?? ''),
      imageID: '',
      ready: false,
      started: false,
      restartCount: 5,
      state: { waiting: { reason: 'CrashLoopBackOff', message: `back-off 5m0s restarting failed container=${String(c.name ?? '')} pod=${name}` } },
      lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: now, finishedAt: now } },
    })) as Json[];
    status.conditions = [
      ...conditionsExcept(status, ['Ready', 'ContainersReady']),
      {
        type: 'Ready',
        status: 'False',
        lastProbeTime: null,
        lastTransitionTime: now,
        reason: 'ContainersNotReady',
        message: `containers with unready status: [${containers.map((c) => String(c.name)).join(' ')}]`,
      },
      {
        type: 'ContainersReady',
        status: 'False',
        lastProbeTime: null,
        lastTransitionTime: now,
        reason: 'ContainersNotReady',
        message: `containers with unready status: [${containers.map((c) => String(c.name)).join(' ')}]`,
      },
    ];
    next.status = status;
    this.store.update(T.pods, next);
    this.kick();
    return true;
  }

  // -------------------------------------------------------------------------------------------
  // Kubelet: Pending -> Running/Ready, or Pending with ImagePullBackOff.

  #kubelet(pod: KObject): void {
    const uid = pod.metadata.uid;
    if (this.#kubeletSeen.has(uid) || pod.status?.phase !== 'Pending' || pod.metadata.deletionTimestamp) return;
    // Only a Ready node's kubelet runs pods; a pod waits while its node is not Ready.
    const node = typeof pod.spec?.nodeName === 'string' ? this.store.get(T.nodes, undefined, pod.spec.nodeName) : undefined;
    if (!node || !isNodeReady(node)) return;
    this.#kubeletSeen.add(uid);
    const hostIP = nodeInternalIp(node);
    const network = podNetworkOf(node);
    const containers = containersOf(pod);
    const failing = containers.find((c) => this.opts.imagePullFails(String(c.image ?? '')));
    this.#after(failing ? IMAGE_PULL_FAIL_MS : POD_START_MS, () => {
      const current = this.store.get(T.pods, pod.metadata.namespace, pod.metadata.name);
      if (!current || current.metadata.uid !== uid) return;
      const next = clone(current);
      const now = timestamp();
      const status = next.status ?? {};
      status.hostIP = hostIP;
      status.hostIPs = [{ ip: hostIP }];
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
          {
            type: 'Ready',
            status: 'False',
            lastProbeTime: null,
            lastTransitionTime: now,
            reason: 'ContainersNotReady',
            message: `containers with unready status: [${containers.map((c) => String(c.name)).join(' ')}]`,
          },
          {
            type: 'ContainersReady',
            status: 'False',
            lastProbeTime: null,
            lastTransitionTime: now,
            reason: 'ContainersNotReady',
            message: `containers with unready status: [${containers.map((c) => String(c.name)).join(' ')}]`,
          },
        ];
      } else {
        status.phase = 'Running';
        status.podIP = `${network}.${(this.#podIp++ % 250) + 2}`;
        status.podIPs = [{ ip: status.podIP }];
        status.startTime = now;
        status.containerStatuses = containers.map((c) => ({
          name: String(c.name ?? ''),
          image: String(c.image ?? ''),
          // An image pinned by digest runs that digest; a tag resolves to one derived from the reference.
          imageID: /@sha256:[0-9a-f]{64}$/.test(String(c.image ?? ''))
            ? String(c.image)
            : `${String(c.image ?? '')}@sha256:${createHash('sha256')
                .update(String(c.image ?? ''))
                .digest('hex')}`,
          containerID: `containerd://${createHash('sha256')
            .update(`${uid}/${String(c.name)}`)
            .digest('hex')}`,
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

function conditionsExcept(status: JsonObject, types: string[]): Json[] {
  return (Array.isArray(status.conditions) ? status.conditions : []).filter((c) => !(isObject(c) && types.includes(String(c.type))));
}

function revision(rs: KObject): number {
  return Number(rs.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? 0);
}
