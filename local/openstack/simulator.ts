// The OpenStack simulator: Keystone, Glance, Nova, Neutron, Cinder and Heat on one port under
// devstack's path prefixes, behind a keystonemiddleware-like token check, with injectable faults
// (5xx, slowness, failing stacks and servers, quotas), a control API under /_sim/ that tests
// use to inject faults, inspect what exists, wait until everything has settled, read a stack's
// own work time, signal software deployments and set the load inside servers (what their
// diagnostics report), and a tiny load balancer under /_lb/.
import type http from 'node:http';
import { closeServer, listen } from '../aws-json.ts';
import { createGuardedServer, isClientGone, requestUrl } from '../http-guard.ts';
import { Cinder, cinderError } from './cinder.ts';
import { FaultRegistry, parseFault, type FaultSpec, type QuotaLimits, type ServiceName } from './faults.ts';
import type { LoadSettings } from './guest.ts';
import { Glance, glanceError } from './glance.ts';
import { HeatApi, heatError } from './heat/api.ts';
import { HeatEngine } from './heat/engine.ts';
import { json, parseJson, readBody, writeReply, type Router, type SimReply, type SimRequest } from './http.ts';
import { DEFAULT_PASSWORD, header, Keystone, keystoneError, type Token } from './keystone.ts';
import { LoadBalancer } from './lb.ts';
import { Neutron, neutronError } from './neutron.ts';
import { microversionText, Nova, novaError, requestedMicroversion, type ComputeHost } from './nova.ts';
import { ApiError, isRecord, requestId, Scheduler, type Cloud } from './state.ts';

export type { FaultSpec, QuotaLimits, ServiceName } from './faults.ts';
export type { ComputeHost } from './nova.ts';
export type { LoadSettings } from './guest.ts';

export interface OpenStackSimulatorOptions {
  host?: string;
  /** 0 = ephemeral. */
  port?: number;
  /** Multiplies all built-in delays (server build, volume, image store, Heat overheads, retry backoff, stack timeouts); default 1. */
  timeScale?: number;
  log?: (line: string) => void;
  /** Keystone token lifetime in seconds (not scaled); default 3600. */
  tokenTtlSeconds?: number;
  /** Initial quotas (Nova's defaults are 10 instances, 20 cores, 51200 MB; -1 = unlimited). */
  quotas?: QuotaLimits;
  /** The simulated compute hosts (default: four hosts in zone "nova"). */
  computeHosts?: ComputeHost[];
  /** Heat's action_retry_limit (default 5): how often a resource that went to ERROR is re-created. */
  heatRetryLimit?: number;
}

export type SimulatorCredentials = {
  username: string;
  password: string;
  project: string;
  projectDomain: string;
  userDomain: string;
  region: string;
};

/** One kind of thing: how many, their ids, and a summary of each. */
interface Listed<T extends { id: string }> {
  count: number;
  ids: string[];
  items: T[];
}

export interface SimulatorState {
  stacks: Listed<{ id: string; name: string; status: string; nested: boolean }>;
  servers: Listed<{ id: string; name: string; status: string; host: string | null }>;
  ports: Listed<{ id: string; name: string; status: string; networkId: string; deviceId: string }>;
  networks: Listed<{ id: string; name: string }>;
  subnets: Listed<{ id: string; name: string; cidr: string }>;
  images: Listed<{ id: string; name: string | null; status: string; storeMs: number | null }>;
  volumes: Listed<{ id: string; name: string | null; status: string }>;
  snapshots: Listed<{ id: string; name: string | null; status: string; volumeId: string }>;
  serverGroups: Listed<{ id: string; name: string; members: number }>;
  deployments: Listed<{ id: string; stackId: string; resource: string; state: string }>;
  /** What devstack has before anyone starts (not counted above). */
  preloaded: {
    images: Array<{ id: string; name: string | null }>;
    networks: Array<{ id: string; name: string }>;
    subnets: Array<{ id: string; name: string }>;
    flavors: Array<{ id: string; name: string }>;
  };
  quotas: { instances: number; cores: number; ram: number; volumes: number; gigabytes: number; snapshots: number; ports: number };
  /** Tracked work in flight (0 when settled). */
  busy: number;
}

export interface StackWorkTime {
  stackId: string;
  stackName: string;
  timeScale: number;
  /** Each action from its first IN_PROGRESS to COMPLETE/FAILED; workMs is null while running. */
  actions: Array<{ action: string; status: string; startedAt: string; finishedAt: string | null; workMs: number | null }>;
}

/** The control API in programmatic form. */
export interface FaultControl {
  /** Validates and activates a fault (e.g. {kind: 'server-error', count: 6}); throws on a bad spec. */
  inject(fault: FaultSpec): void;
  /** Removes every fault and restores default quotas. */
  clear(): void;
  active(): unknown[];
  /** Makes every issued token expire now (clients must re-authenticate). */
  expireTokens(): number;
  /** Signals a SoftwareDeployment (by its physical id); false when there is no such deployment. */
  signal(deploymentId: string, body?: Record<string, unknown>): boolean;
  state(): SimulatorState;
  workTime(stackId: string): StackWorkTime | undefined;
  /** Sets the load inside a server (what its diagnostics report); throws on a bad request, false when there is no such server. */
  setLoad(serverId: string, settings: LoadSettings): boolean;
  /** A server's load settings, rates and counters as of now; undefined when there is no such server. */
  load(serverId: string): Record<string, unknown> | undefined;
}

export interface OpenStackSimulator {
  /** Keystone v3 URL, e.g. http://127.0.0.1:PORT/identity/v3 — what a VIM's interfaceInfo.endpoint / auth_url is. */
  authUrl: string;
  /** http://127.0.0.1:PORT */
  url: string;
  /** Admin credentials, as accessInfo. */
  credentials: SimulatorCredentials;
  /** Everything asynchronous (stack/server/image transitions) has reached a stable state; waiting for a deployment signal counts as stable. */
  settled(): Promise<void>;
  faults: FaultControl;
  close(): Promise<void>;
}

class SimCloud implements Cloud {
  keystone!: Keystone;
  glance!: Glance;
  nova!: Nova;
  neutron!: Neutron;
  cinder!: Cinder;
  heat!: HeatEngine;

  constructor(
    readonly sched: Scheduler,
    readonly faults: FaultRegistry,
    readonly log: (line: string) => void,
    public publicBase: string,
    readonly region: string,
  ) {}
}

const UNAUTHORIZED = { error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' } };

interface Service {
  name: ServiceName;
  prefix: string;
  render: (err: ApiError) => SimReply;
  /** Unauthenticated version discovery paths. */
  open: (method: string, path: string) => boolean;
  handle: (req: SimRequest, token: Token | undefined) => Promise<SimReply>;
}

export async function startOpenStackSimulator(opts: OpenStackSimulatorOptions = {}): Promise<OpenStackSimulator> {
  const log = opts.log ?? (() => {});
  const timeScale = opts.timeScale ?? 1;
  if (!(timeScale >= 0)) throw new Error('timeScale must be a number >= 0');
  const sched = new Scheduler(timeScale, (err) => log(`simulator: background task failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`));
  let cloud!: SimCloud;
  const applyQuota = (limits: QuotaLimits) => {
    if (limits.instances !== undefined) cloud.nova.quota.instances = limits.instances;
    if (limits.cores !== undefined) cloud.nova.quota.cores = limits.cores;
    if (limits.ram !== undefined) cloud.nova.quota.ram = limits.ram;
    if (limits.volumes !== undefined) cloud.cinder.quota.volumes = limits.volumes;
    if (limits.gigabytes !== undefined) cloud.cinder.quota.gigabytes = limits.gigabytes;
    if (limits.snapshots !== undefined) cloud.cinder.quota.snapshots = limits.snapshots;
    if (limits.ports !== undefined) cloud.neutron.portQuota = limits.ports;
  };
  const faults = new FaultRegistry(applyQuota);
  cloud = new SimCloud(sched, faults, log, '', 'RegionOne');
  cloud.keystone = new Keystone(cloud, opts.tokenTtlSeconds ?? 3600);
  cloud.glance = new Glance(cloud);
  cloud.neutron = new Neutron(cloud);
  cloud.cinder = new Cinder(cloud);
  cloud.nova = new Nova(cloud, opts.computeHosts);
  cloud.heat = new HeatEngine(cloud, opts.heatRetryLimit ?? 5);
  const heatApi = new HeatApi(cloud, cloud.heat);
  const lb = new LoadBalancer(cloud);
  const defaultQuotas: Required<QuotaLimits> = {
    instances: 10,
    cores: 20,
    ram: 51200,
    volumes: 10,
    gigabytes: 1000,
    snapshots: 10,
    ports: 500,
    ...opts.quotas,
  };
  applyQuota(defaultQuotas);

  const route = async <C>(router: Router<C>, req: SimRequest, path: string, ctx: C, render: (err: ApiError) => SimReply): Promise<SimReply> => {
    const found = router.find(req.method, path);
    if (found === undefined) return render(new ApiError(404, 'The resource could not be found.'));
    if (found === 'method') return render(new ApiError(405, 'The method is not allowed for the requested URL.'));
    return found.handler({ ...req, path }, found.params, ctx);
  };
  // Unauthenticated requests only reach version discovery routes, which ignore who asks.
  const anonymous: Token = {
    id: '',
    user: { id: '', name: 'anonymous', domainId: 'default', password: '', defaultProjectId: '' },
    project: undefined,
    roles: [],
    methods: [],
    issuedAt: 0,
    expiresAt: 0,
    auditId: '',
    revoked: false,
  };
  const caller = (token: Token | undefined): Token => token ?? anonymous;

  const services: Service[] = [
    {
      name: 'keystone',
      prefix: '/identity',
      render: keystoneError,
      open: () => true,
      handle: (req) => route(cloud.keystone.router, req, req.path, cloud.keystone, keystoneError),
    },
    {
      name: 'glance',
      prefix: '/image',
      render: glanceError,
      open: (m, p) => m === 'GET' && (p === '/' || p === '' || p === '/versions'),
      handle: (req, token) => route(cloud.glance.router, req, req.path, caller(token), glanceError),
    },
    {
      name: 'nova',
      prefix: '/compute',
      render: novaError,
      open: (m, p) => m === 'GET' && ['', '/', '/v2.1', '/v2.1/'].includes(p),
      handle: async (req, token) => {
        let path = req.path;
        const t = token;
        // Nova still accepts the legacy /v2.1/{project_id}/... form.
        const legacy = /^\/v2\.1\/([0-9a-f]{32})(\/.*)?$/.exec(path);
        if (legacy && t && (legacy[1] === t.project?.id || cloud.keystone.isAdmin(t))) path = `/v2.1${legacy[2] ?? ''}`;
        const version = requestedMicroversion(req);
        const reply = await route(cloud.nova.router, req, path, caller(t), novaError);
        const text = microversionText(version);
        return {
          ...reply,
          headers: {
            ...reply.headers,
            'openstack-api-version': `compute ${text}`,
            'x-openstack-nova-api-version': text,
            vary: 'OpenStack-API-Version, X-OpenStack-Nova-API-Version',
          },
        };
      },
    },
    {
      name: 'neutron',
      prefix: '/networking',
      render: neutronError,
      open: (m, p) => m === 'GET' && (p === '' || p === '/'),
      handle: (req, token) => route(cloud.neutron.router, req, req.path.replace(/\.json$/, ''), caller(token), neutronError),
    },
    {
      name: 'cinder',
      prefix: '/volume',
      render: cinderError,
      open: (m, p) => m === 'GET' && (p === '' || p === '/'),
      handle: async (req, token) => {
        const t = caller(token);
        const m = /^\/v3\/([^/]+)(\/.*)?$/.exec(req.path);
        if (!m) return route(cloud.cinder.router, req, req.path, t, cinderError);
        if (m[1] !== t.project?.id && !cloud.keystone.isAdmin(t)) throw new ApiError(403, 'Policy does not allow this project to be accessed.');
        const reply = await route(cloud.cinder.router, req, m[2] ?? '/', t, cinderError);
        return { ...reply, headers: { ...reply.headers, 'openstack-api-version': 'volume 3.0' } };
      },
    },
    {
      name: 'heat',
      prefix: '/heat-api',
      render: heatError,
      open: (m, p) => m === 'GET' && (p === '' || p === '/'),
      handle: async (req, token) => {
        if (req.path === '/') return json(300, { versions: [{ id: 'v1.0', status: 'CURRENT', links: [{ rel: 'self', href: `${req.origin}/heat-api/v1/` }] }] });
        const t = caller(token);
        const m = /^\/v1\/([^/]+)(\/.*)?$/.exec(req.path);
        if (!m) throw new ApiError(404, 'The resource could not be found.');
        return route(heatApi.router, req, m[2] ?? '/', heatApi.context(t, m[1] as string), heatError);
      },
    },
  ];

  const control = async (req: SimRequest): Promise<SimReply> => {
    const path = req.path;
    if (path === '/faults' && req.method === 'POST') {
      const fault = parseFault(await req.json());
      faults.add(fault);
      log(`simulator: fault injected: ${JSON.stringify(fault)}`);
      return json(201, { faults: faults.list() });
    }
    if (path === '/faults' && req.method === 'GET') return json(200, { faults: faults.list() });
    if (path === '/faults' && req.method === 'DELETE') {
      control_.clear();
      return { status: 204 };
    }
    if (path === '/state' && req.method === 'GET') return json(200, control_.state());
    if (path === '/settled' && req.method === 'POST') {
      await sched.settled();
      return json(200, { settled: true });
    }
    if (path === '/tokens/expire' && req.method === 'POST') return json(200, { expired: control_.expireTokens() });
    // A compute host moved to another availability zone, as an operator's host aggregate with an
    // availability_zone would; like Nova, only a host without servers.
    const zoned = /^\/hosts\/([^/]+)\/zone$/.exec(path);
    if (zoned && req.method === 'POST') {
      const body = await req.json();
      const zone = isRecord(body) ? body.zone : undefined;
      if (typeof zone !== 'string' || !/^[A-Za-z0-9_.-]{1,255}$/.test(zone)) return json(400, { error: 'body must be {"zone": "<availability zone name>"}' });
      const host = cloud.nova.hosts.find((h) => h.name === decodeURIComponent(zoned[1] as string));
      if (!host) return json(404, { error: `no compute host ${zoned[1]}` });
      if ([...cloud.nova.servers.values()].some((server) => server.host === host.name))
        return json(409, { error: `compute host ${host.name} has servers; it cannot change availability zone` });
      host.zone = zone;
      log(`simulator: compute host ${host.name} is in availability zone ${zone}`);
      return json(200, { host: host.name, zone });
    }
    // A server's status forced from outside, as a hypervisor failure (ERROR) or a guest shutdown (SHUTOFF) would.
    const forced = /^\/servers\/([^/]+)\/status$/.exec(path);
    if (forced && req.method === 'POST') {
      const body = await req.json();
      const status = isRecord(body) ? body.status : undefined;
      if (status !== 'ERROR' && status !== 'SHUTOFF' && status !== 'ACTIVE')
        return json(400, { error: 'body must be {"status": "ERROR" | "SHUTOFF" | "ACTIVE"}' });
      const server = cloud.nova.servers.get(decodeURIComponent(forced[1] as string));
      if (!server) return json(404, { error: `no server ${forced[1]}` });
      const message = isRecord(body) && typeof body.message === 'string' ? body.message : 'injected fault: the hypervisor reported the instance failed';
      // The guest's counters are brought up to now before its power state changes under them.
      cloud.nova.syncGuest(server);
      Object.assign(
        server,
        status === 'ERROR'
          ? { status, vmState: 'error', powerState: 0, taskState: null, fault: { code: 500, message, details: message, created: Date.now() } }
          : status === 'SHUTOFF'
            ? { status, vmState: 'stopped', powerState: 4, taskState: null }
            : { status, vmState: 'active', powerState: 1, taskState: null, fault: null },
      );
      cloud.nova.syncGuest(server);
      log(`simulator: server ${server.id} forced to ${status}`);
      return json(200, { id: server.id, status: server.status });
    }
    const load = /^\/servers\/([^/]+)\/load$/.exec(path);
    if (load && (req.method === 'GET' || req.method === 'POST')) {
      const id = decodeURIComponent(load[1] as string);
      if (req.method === 'POST' && !control_.setLoad(id, (await req.json()) as LoadSettings)) return json(404, { error: `no server ${id}` });
      const described = control_.load(id);
      return described ? json(200, described) : json(404, { error: `no server ${id}` });
    }
    const work = /^\/stacks\/([^/]+)\/work-time$/.exec(path);
    if (work && req.method === 'GET') {
      const wt = control_.workTime(decodeURIComponent(work[1] as string));
      return wt ? json(200, wt) : json(404, { error: `no stack ${work[1]}` });
    }
    const signal = /^\/signal\/([^/]+)$/.exec(path);
    if (signal && req.method === 'POST') {
      const body = await req.json();
      const ok = control_.signal(decodeURIComponent(signal[1] as string), isRecord(body) ? body : {});
      return ok ? json(200, { signalled: true }) : json(404, { error: `no software deployment ${signal[1]}` });
    }
    return json(404, { error: `no control endpoint ${req.method} /_sim${path}` });
  };

  const control_: FaultControl = {
    inject: (fault) => faults.add(parseFault(fault)),
    clear: () => {
      faults.clear();
      applyQuota(defaultQuotas);
    },
    active: () => faults.list(),
    expireTokens: () => cloud.keystone.expireAll(),
    signal: (id, body = {}) => cloud.heat.signalDeployment(id, body),
    state: () => {
      const listed = <T extends { id: string }>(items: T[]): Listed<T> => ({ count: items.length, ids: items.map((i) => i.id), items });
      return {
        stacks: listed(cloud.heat.live().map((s) => ({ id: s.id, name: s.name, status: s.state, nested: s.parent !== null }))),
        servers: listed([...cloud.nova.servers.values()].map((s) => ({ id: s.id, name: s.name, status: s.status, host: s.host }))),
        ports: listed(
          [...cloud.neutron.ports.values()].map((p) => ({ id: p.id, name: p.name, status: p.status, networkId: p.networkId, deviceId: p.deviceId })),
        ),
        networks: listed([...cloud.neutron.networks.values()].filter((n) => !n.preloaded).map((n) => ({ id: n.id, name: n.name }))),
        subnets: listed([...cloud.neutron.subnets.values()].filter((n) => !n.preloaded).map((n) => ({ id: n.id, name: n.name, cidr: n.cidr }))),
        images: listed(
          [...cloud.glance.images.values()].filter((i) => !i.preloaded).map((i) => ({ id: i.id, name: i.name, status: i.status, storeMs: i.storeMs ?? null })),
        ),
        volumes: listed([...cloud.cinder.volumes.values()].map((v) => ({ id: v.id, name: v.name, status: v.status }))),
        snapshots: listed([...cloud.cinder.snapshots.values()].map((v) => ({ id: v.id, name: v.name, status: v.status, volumeId: v.volumeId }))),
        serverGroups: listed([...cloud.nova.groups.values()].map((g) => ({ id: g.id, name: g.name, members: g.members.length }))),
        deployments: listed([...cloud.heat.deployments.values()].map((d) => ({ id: d.id, stackId: d.stack.id, resource: d.resourceName, state: d.state }))),
        preloaded: {
          images: [...cloud.glance.images.values()].filter((i) => i.preloaded).map((i) => ({ id: i.id, name: i.name })),
          networks: [...cloud.neutron.networks.values()].filter((n) => n.preloaded).map((n) => ({ id: n.id, name: n.name })),
          subnets: [...cloud.neutron.subnets.values()].filter((n) => n.preloaded).map((n) => ({ id: n.id, name: n.name })),
          flavors: [...cloud.nova.flavors.values()].map((f) => ({ id: f.id, name: f.name })),
        },
        quotas: {
          ...cloud.nova.quota,
          volumes: cloud.cinder.quota.volumes,
          gigabytes: cloud.cinder.quota.gigabytes,
          snapshots: cloud.cinder.quota.snapshots,
          ports: cloud.neutron.portQuota,
        },
        busy: sched.busy,
      };
    },
    setLoad: (id, settings) => {
      const server = cloud.nova.servers.get(id);
      if (!server) return false;
      cloud.nova.guests.set(cloud.nova.guestView(server), settings);
      log(`simulator: load of server ${id} set: ${JSON.stringify(settings)}`);
      return true;
    },
    load: (id) => {
      const server = cloud.nova.servers.get(id);
      return server ? cloud.nova.guests.describe(cloud.nova.guestView(server)) : undefined;
    },
    workTime: (id) => {
      const s = cloud.heat.stacks.get(id);
      if (!s) return undefined;
      return {
        stackId: s.id,
        stackName: s.name,
        timeScale,
        actions: s.work.map((w) => ({
          action: w.action,
          status: w.status,
          startedAt: new Date(w.startedAt).toISOString(),
          finishedAt: w.finishedAt === null ? null : new Date(w.finishedAt).toISOString(),
          workMs: w.workMs,
        })),
      };
    },
  };

  const handle = async (raw: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = requestUrl(raw);
    const origin = `http://${raw.headers.host ?? new URL(cloud.publicBase).host}`;
    let bodyCache: Promise<Buffer> | undefined;
    const bytes = () => (bodyCache ??= readBody(raw, 16 * 1024 * 1024));
    const base: SimRequest = {
      method: raw.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: raw.headers,
      raw,
      origin,
      bytes,
      json: async () => parseJson(await bytes()),
    };
    const rid = requestId();
    const started = Date.now();
    const send = (reply: SimReply) => {
      const headers = { 'x-openstack-request-id': rid, ...reply.headers };
      writeReply(res, { ...reply, headers }, base.method === 'HEAD');
      // Successful reads are the bulk (clients poll); they stay out of the log.
      if (!((base.method === 'GET' || base.method === 'HEAD') && reply.status < 400))
        log(`${base.method} ${url.pathname}${url.search} -> ${reply.status} (${Date.now() - started} ms)`);
    };

    if (url.pathname.startsWith('/_lb/')) {
      send(await lb.handle({ ...base, path: url.pathname.slice('/_lb'.length) }));
      return;
    }
    if (url.pathname === '/_sim' || url.pathname.startsWith('/_sim/')) {
      try {
        send(await control({ ...base, path: url.pathname.slice('/_sim'.length) }));
      } catch (err) {
        if (isClientGone(err, raw)) throw err;
        send(
          err instanceof ApiError
            ? json(err.status, { error: err.message })
            : err instanceof URIError
              ? json(400, { error: 'bad percent-encoding in the path' })
              : json(500, { error: String(err) }),
        );
      }
      return;
    }
    const service = services.find((s) => url.pathname === s.prefix || url.pathname.startsWith(`${s.prefix}/`));
    if (!service) {
      send({ status: 404, body: '404 Not Found\n\nThe resource could not be found.\n\n   ', contentType: 'text/plain; charset=UTF-8' });
      return;
    }
    const path = url.pathname.slice(service.prefix.length) || '/';
    const req: SimRequest = { ...base, path };
    await sched.track(async () => {
      try {
        const slow = faults.take('slow', (f) => f.service === service.name);
        if (slow) await sched.sleepExactly(slow.ms);
        const failure = faults.take(
          'http-5xx',
          (f) =>
            f.service === service.name &&
            (f.method === undefined || f.method.toUpperCase() === req.method) &&
            (f.path === undefined || url.pathname.includes(f.path)),
        );
        if (failure) {
          send(serverError(service, failure.status ?? 500));
          return;
        }
        let token: Token | undefined;
        if (service.name !== 'keystone' && !service.open(req.method, path)) {
          token = cloud.keystone.validate(header(req, 'x-auth-token'));
          if (!token) {
            send(json(401, UNAUTHORIZED, { 'www-authenticate': `Keystone uri="${cloud.publicBase}/identity"` }));
            return;
          }
        }
        send(await service.handle(req, token));
      } catch (err) {
        if (err instanceof ApiError) {
          if (err.status === 401) send(json(401, UNAUTHORIZED, { 'www-authenticate': `Keystone uri="${cloud.publicBase}/identity"` }));
          else send(service.render(err));
          return;
        }
        if (isClientGone(err, raw)) throw err;
        log(`simulator: ${req.method} ${url.pathname} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        send(serverError(service, 500));
      }
    });
  };

  const server = createGuardedServer('OpenStack simulator', handle, log);
  const { endpoint } = await listen(server, { name: 'OpenStack simulator', host: opts.host, port: opts.port });
  cloud.publicBase = endpoint;
  const admin = cloud.keystone.adminProject;
  log(`simulator: listening on ${endpoint} (timeScale ${timeScale})`);

  let closed = false;
  return {
    authUrl: `${endpoint}/identity/v3`,
    url: endpoint,
    credentials: { username: 'admin', password: DEFAULT_PASSWORD, project: admin.name, projectDomain: 'Default', userDomain: 'Default', region: cloud.region },
    settled: () => sched.settled(),
    faults: control_,
    async close() {
      if (closed) return;
      closed = true;
      sched.close();
      await closeServer(server);
    },
  };
}

/** A 500 in the service's own shape; 502-504 as the fronting web server (Apache in devstack) sends them. */
function serverError(service: Service, status: number): SimReply {
  if (status !== 500) {
    const titles: Record<number, string> = { 502: 'Proxy Error', 503: 'Service Unavailable', 504: 'Gateway Timeout' };
    const title = titles[status] ?? 'Error';
    return {
      status,
      body: `<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>${status} ${title}</title>\n</head><body>\n<h1>${title}</h1>\n<p>The server is temporarily unable to service your request.</p>\n</body></html>\n`,
      contentType: 'text/html; charset=iso-8859-1',
    };
  }
  const messages: Record<ServiceName, string> = {
    keystone: 'An unexpected error prevented the server from fulfilling your request.',
    glance: 'The server has either erred or is incapable of performing the requested operation.',
    nova: "Unexpected API Error. Please report this at http://bugs.launchpad.net/nova/ and attach the Nova API log if possible.\n<class 'oslo_messaging.exceptions.MessagingTimeout'>",
    neutron: 'Request Failed: internal server error while processing your request.',
    cinder: 'The server has either erred or is incapable of performing the requested operation.',
    heat: 'Timed out waiting for a reply to message ID 5d1f8e2a0e4c4f6c8b7d2a1e3f4b5c6d',
  };
  const err = new ApiError(
    500,
    messages[service.name],
    service.name === 'heat' ? 'MessagingTimeout' : service.name === 'neutron' ? 'HTTPInternalServerError' : undefined,
  );
  return service.render(err);
}
