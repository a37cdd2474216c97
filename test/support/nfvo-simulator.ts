// A test NFVO serving SOL003 granting (clause 9) and VNF package management (clause 10: a
// catalogue of onboarded packages by vnfdId, their content, and subscriptions whose callbacks it
// tests and notifies of operational state changes and deletions, and may drop): grants answered
// at once (201), asynchronously (202 and a Location, then 202 with Retry-After a number of times,
// then 200 with the Grant; some polls may first be answered 503),
// refused (403 ProblemDetails, at once or once asked for), never decided, or after 5xx/429 answers;
// and an OAuth 2.0 token endpoint (client credentials) whose bearer tokens the grant API then
// demands. It records every exchange, checks each against the SOL003 Granting schemas and notes a
// poll that came sooner than the Retry-After it had asked for, so tests assert counts and order.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertEtsiSchema, type EtsiApi } from './etsi.ts';

const PKGM = '/vnfpkgm/v2';

export type GrantBehaviour =
  | { kind: 'sync' }
  | { kind: 'async'; pending: number; retryAfter?: number; failingPolls?: number }
  | { kind: 'never'; retryAfter?: number }
  | { kind: 'refuse'; detail: string; whenPolled?: boolean }
  | { kind: 'unavailable'; failures: number; status?: number; retryAfter?: number };

export interface NfvoExchange {
  method: string;
  path: string;
  status: number;
  authorization?: string;
  version?: string;
  body?: unknown;
  /** A poll or a repeated POST that came before the Retry-After this simulator had asked for had passed. */
  early?: boolean;
}

/** A package in the simulated NFVO's catalogue (SOL003 VnfPkgInfo and its CSAR). */
export interface NfvoPackage {
  id: string;
  vnfdId: string;
  csar: Buffer;
  operationalState: 'ENABLED' | 'DISABLED';
  onboardingState: 'ONBOARDED' | 'PROCESSING';
  vnfProvider: string;
  vnfProductName: string;
  vnfSoftwareVersion: string;
  vnfdVersion: string;
}

/** A subscription the VNFM made (POST /vnfpkgm/v2/subscriptions), with what its callbacks answered. */
export interface NfvoPkgmSubscription {
  id: string;
  request: { callbackUri: string; filter?: { vnfdId?: string[]; notificationTypes?: string[] }; authentication?: Record<string, unknown> };
  /** Status of each notification delivered to it, in order. */
  deliveries: number[];
}

export interface NfvoSimulator {
  url: string;
  /** Adds a package to the catalogue, ONBOARDED and ENABLED unless said; returns the NFVO's VnfPkgInfo id. */
  addPackage(pkg: Pick<NfvoPackage, 'vnfdId' | 'csar'> & Partial<Omit<NfvoPackage, 'id' | 'vnfdId' | 'csar'>>): string;
  /** Changes a package's operationalState and notifies the subscriptions that take it (VnfPackageChangeNotification, OP_STATE_CHANGE). */
  setOperationalState(vnfdId: string, state: 'ENABLED' | 'DISABLED'): Promise<void>;
  /** Removes a package from the catalogue and notifies the subscriptions (PKG_DELETE). */
  deletePackage(vnfdId: string): Promise<void>;
  /** The exchanges about one package (GET .../onboarded_vnf_packages/{vnfdId}[/...]). */
  packageExchanges(vnfdId: string): NfvoExchange[];
  /** The VNFM's package management subscriptions. */
  pkgmSubscriptions: NfvoPkgmSubscription[];
  /** Forgets every subscription without telling anyone, as an NFVO that lost or purged them does (a GET of one is then 404). */
  dropPkgmSubscriptions(): void;
  /** The next this many package management requests are answered 503 (Retry-After: 1). */
  pkgmFailures: number;
  /** The next this many package_content requests are answered 409, as for a package gone back to onboarding since its VnfPkgInfo was read. */
  contentConflicts: number;
  /**
   * The zones every Grant names (SOL003 ZoneInfo: `zoneId` is the VIM's zone) and, by VDU id, the
   * ZoneInfo `id` its addResources place that VDU's new VNFCs in (a VDU not listed: no zoneId).
   */
  grantZones: { zones: Array<{ id: string; zoneId: string }>; vdus: Record<string, string> };
  /** How the next grant requests are answered; a grant keeps the behaviour it was asked with. */
  behaviour: GrantBehaviour;
  exchanges: NfvoExchange[];
  /** The grant requests (POST /grant/v1/grants) and the polls (GET /grant/v1/grants/{id}) only. */
  grantExchanges(): NfvoExchange[];
  tokenRequests: number;
  /** Decides every pending asynchronous grant: each is answered 200 at its next poll. */
  release(): void;
  /** Why an exchange did not conform to SOL003 (empty when all did). */
  nonConforming: string[];
  close(): Promise<void>;
}

interface PendingGrant {
  behaviour: GrantBehaviour;
  request: Record<string, unknown>;
  polls: number;
  /** Polls answered 503 so far (`failingPolls`). */
  failed: number;
  /** When the last answer asked to wait until (ms since the epoch, scaled), if it did. */
  notBefore?: number;
}

export interface NfvoSimulatorOptions {
  /** With both, the grant API demands a bearer token from /token (HTTP Basic client credentials). */
  clientId?: string;
  clientSecret?: string;
  /** The VNFM's VNFM_WAIT_SCALE: its Wait states last Retry-After times this. */
  waitScale?: number;
}

// A timer may fire a few milliseconds short of its delay.
const EARLY_SLACK_MS = 50;

export async function startNfvoSimulator(options: NfvoSimulatorOptions = {}): Promise<NfvoSimulator> {
  const grants = new Map<string, PendingGrant>();
  const catalogue = new Map<string, NfvoPackage>();
  const tokens = new Set<string>();
  let serial = 0;
  let unavailableSeen = 0;
  let retryNotBefore: number | undefined;
  let released = false;
  const waitScale = options.waitScale ?? 0.2;
  const sim: NfvoSimulator = {
    url: '',
    behaviour: { kind: 'sync' },
    grantZones: { zones: [{ id: 'zone-1', zoneId: 'nova' }], vdus: {} },
    exchanges: [],
    grantExchanges: () => sim.exchanges.filter((e) => e.path.startsWith('/grant/v1/grants')),
    addPackage: (pkg) => {
      const id = `nfvo-pkg-${++serial}`;
      catalogue.set(pkg.vnfdId, {
        id,
        operationalState: 'ENABLED',
        onboardingState: 'ONBOARDED',
        vnfProvider: 'Company',
        vnfProductName: 'Sample VNF',
        vnfSoftwareVersion: '1.0',
        vnfdVersion: '1.0',
        ...pkg,
      });
      return id;
    },
    setOperationalState: async (vnfdId, state) => {
      const pkg = catalogue.get(vnfdId);
      if (!pkg) throw new Error(`the NFVO has no package with vnfdId ${vnfdId}`);
      pkg.operationalState = state;
      await notify(pkg, 'OP_STATE_CHANGE');
    },
    deletePackage: async (vnfdId) => {
      const pkg = catalogue.get(vnfdId);
      if (!pkg) throw new Error(`the NFVO has no package with vnfdId ${vnfdId}`);
      catalogue.delete(vnfdId);
      await notify(pkg, 'PKG_DELETE');
    },
    packageExchanges: (vnfdId) => sim.exchanges.filter((e) => e.path.startsWith(`${PKGM}/onboarded_vnf_packages/${vnfdId}`)),
    pkgmSubscriptions: [],
    dropPkgmSubscriptions: () => {
      sim.pkgmSubscriptions = [];
    },
    pkgmFailures: 0,
    contentConflicts: 0,
    tokenRequests: 0,
    release: () => {
      released = true;
    },
    nonConforming: [],
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const conform = async (what: string, definition: string, body: unknown, api: EtsiApi = 'grant') => {
    try {
      await assertEtsiSchema(api, definition, body);
    } catch (error) {
      sim.nonConforming.push(`${what}: ${(error as Error).message}`);
    }
  };
  /** The Grant's addResources (GrantInfo): each COMPUTE resource of a VDU grantZones places, with its zone. */
  const placements = (request: Record<string, unknown>) =>
    ((request.addResources ?? []) as Array<{ id: string; type?: string; resourceTemplateId?: string }>)
      .filter((resource) => resource.type === 'COMPUTE' && resource.resourceTemplateId && Object.hasOwn(sim.grantZones.vdus, resource.resourceTemplateId))
      .map((resource) => ({ resourceDefinitionId: resource.id, zoneId: sim.grantZones.vdus[resource.resourceTemplateId as string] as string }));
  const grantOf = (id: string, request: Record<string, unknown>) => ({
    id,
    vnfInstanceId: request.vnfInstanceId,
    vnfLcmOpOccId: request.vnfLcmOpOccId,
    zones: sim.grantZones.zones.map((zone) => ({ ...zone })),
    ...(placements(request).length ? { addResources: placements(request) } : {}),
    _links: {
      self: { href: `${sim.url}/grant/v1/grants/${id}` },
      vnfLcmOpOcc: { href: String((request._links as { vnfLcmOpOcc?: { href?: string } } | undefined)?.vnfLcmOpOcc?.href ?? '') },
      vnfInstance: { href: String((request._links as { vnfInstance?: { href?: string } } | undefined)?.vnfInstance?.href ?? '') },
    },
  });
  const pkgInfoOf = (pkg: NfvoPackage) => {
    const self = `${sim.url}${PKGM}/vnf_packages/${pkg.id}`;
    return {
      id: pkg.id,
      vnfdId: pkg.vnfdId,
      vnfProvider: pkg.vnfProvider,
      vnfProductName: pkg.vnfProductName,
      vnfSoftwareVersion: pkg.vnfSoftwareVersion,
      vnfdVersion: pkg.vnfdVersion,
      checksum: { algorithm: 'SHA-256', hash: createHash('sha256').update(pkg.csar).digest('hex') },
      packageSecurityOption: 'OPTION_1',
      onboardingState: pkg.onboardingState,
      operationalState: pkg.operationalState,
      usageState: 'NOT_IN_USE',
      vnfmInfo: ['Tacker'],
      _links: { self: { href: self }, vnfd: { href: `${self}/vnfd` }, packageContent: { href: `${self}/package_content` } },
    };
  };
  /** A subscription as the NFVO shows it (SOL003 PkgmSubscription), checked against the schema. */
  const subscriptionBody = async (subscription: NfvoPkgmSubscription) => {
    const body = {
      id: subscription.id,
      callbackUri: subscription.request.callbackUri,
      ...(subscription.request.filter ? { filter: subscription.request.filter } : {}),
      _links: { self: { href: `${sim.url}${PKGM}/subscriptions/${subscription.id}` } },
    };
    await conform('PkgmSubscription', 'PkgmSubscription', body, 'vnfpkgm-sol003');
    return body;
  };
  /** Delivers a VnfPackageChangeNotification to every subscription whose filter takes the package; SOL013 8.3.4 authentication as subscribed. */
  const notify = async (pkg: NfvoPackage, changeType: 'OP_STATE_CHANGE' | 'PKG_DELETE') => {
    for (const subscription of sim.pkgmSubscriptions) {
      const filter = subscription.request.filter;
      if (filter?.vnfdId && !filter.vnfdId.includes(pkg.vnfdId)) continue;
      if (filter?.notificationTypes && !filter.notificationTypes.includes('VnfPackageChangeNotification')) continue;
      const notification = {
        id: `notification-${++serial}`,
        notificationType: 'VnfPackageChangeNotification',
        subscriptionId: subscription.id,
        timeStamp: new Date().toISOString(),
        vnfPkgId: pkg.id,
        vnfdId: pkg.vnfdId,
        changeType,
        ...(changeType === 'OP_STATE_CHANGE' ? { operationalState: pkg.operationalState } : {}),
        _links: {
          vnfPackage: { href: `${sim.url}${PKGM}/vnf_packages/${pkg.id}` },
          vnfPackageByVnfdId: { href: `${sim.url}${PKGM}/onboarded_vnf_packages/${pkg.vnfdId}` },
          subscription: { href: `${sim.url}${PKGM}/subscriptions/${subscription.id}` },
        },
      };
      await conform('VnfPackageChangeNotification', 'VnfPackageChangeNotification', notification, 'vnfpkgm-notification');
      const response = await fetch(subscription.request.callbackUri, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Version: '2.1.0', ...(await callbackAuthorization(subscription)) },
        body: JSON.stringify(notification),
      });
      await response.arrayBuffer();
      subscription.deliveries.push(response.status);
    }
  };
  /** A bearer token from the token endpoint the subscription's OAUTH2_CLIENT_CREDENTIALS names, else HTTP Basic, else nothing. */
  const callbackAuthorization = async (subscription: NfvoPkgmSubscription): Promise<Record<string, string>> => {
    const auth = subscription.request.authentication as
      | {
          authType?: string[];
          paramsBasic?: { userName?: string; password?: string };
          paramsOauth2ClientCredentials?: { clientId: string; clientPassword: string; tokenEndpoint: string };
        }
      | undefined;
    const oauth = auth?.paramsOauth2ClientCredentials;
    if (auth?.authType?.includes('OAUTH2_CLIENT_CREDENTIALS') && oauth) {
      const response = await fetch(oauth.tokenEndpoint, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: `Basic ${Buffer.from(`${oauth.clientId}:${oauth.clientPassword}`).toString('base64')}`,
        },
        body: 'grant_type=client_credentials',
      });
      const token = (await response.json()) as { access_token?: string };
      return token.access_token ? { Authorization: `Bearer ${token.access_token}` } : {};
    }
    const basic = auth?.paramsBasic;
    if (auth?.authType?.includes('BASIC') && basic) return { Authorization: `Basic ${Buffer.from(`${basic.userName}:${basic.password}`).toString('base64')}` };
    return {};
  };
  const waitFor = (retryAfter: number | undefined) => (retryAfter === undefined ? undefined : Date.now() + retryAfter * 1000 * waitScale - EARLY_SLACK_MS);

  const answer = async (
    req: http.IncomingMessage,
    text: string,
  ): Promise<{ status: number; headers?: Record<string, string>; body?: unknown; raw?: Buffer; exchange?: Partial<NfvoExchange> }> => {
    const path = new URL(req.url ?? '/', 'http://nfvo').pathname;
    if (path === '/token') {
      sim.tokenRequests++;
      const expected = `Basic ${Buffer.from(`${options.clientId}:${options.clientSecret}`).toString('base64')}`;
      if (req.headers.authorization !== expected || !text.includes('grant_type=client_credentials')) return { status: 401, body: { error: 'invalid_client' } };
      const token = `nfvo-token-${++serial}`;
      tokens.add(token);
      return { status: 200, body: { access_token: token, token_type: 'Bearer', expires_in: 3600 } };
    }
    if (options.clientId) {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!bearer || !tokens.has(bearer)) return { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } };
    }
    if (!req.headers.version) sim.nonConforming.push(`${req.method} ${path}: no Version header (SOL013 9.1)`);
    if (req.method === 'POST' && path === '/grant/v1/grants') {
      const request = JSON.parse(text || '{}') as Record<string, unknown>;
      await conform('GrantRequest', 'GrantRequest', request);
      const behaviour = sim.behaviour;
      const early = retryNotBefore !== undefined && Date.now() < retryNotBefore;
      retryNotBefore = undefined;
      if (behaviour.kind === 'unavailable' && unavailableSeen < behaviour.failures) {
        unavailableSeen++;
        // The VNFM waits out a 5xx's Retry-After within its step, unscaled.
        retryNotBefore = behaviour.retryAfter === undefined ? undefined : Date.now() + behaviour.retryAfter * 1000 - EARLY_SLACK_MS;
        return {
          status: behaviour.status ?? 503,
          headers: behaviour.retryAfter !== undefined ? { 'Retry-After': String(behaviour.retryAfter) } : {},
          body: { status: behaviour.status ?? 503, detail: 'the NFVO is busy' },
          exchange: { body: request, early },
        };
      }
      if (behaviour.kind === 'refuse' && !behaviour.whenPolled) {
        return { status: 403, body: { title: 'Grant rejected', status: 403, detail: behaviour.detail }, exchange: { body: request, early } };
      }
      const id = `grant-${++serial}`;
      if (behaviour.kind === 'sync' || behaviour.kind === 'unavailable') {
        const grant = grantOf(id, request);
        await conform('Grant (201)', 'Grant', grant);
        return { status: 201, headers: { Location: `${sim.url}/grant/v1/grants/${id}` }, body: grant, exchange: { body: request, early } };
      }
      const retryAfter = behaviour.kind === 'async' || behaviour.kind === 'never' ? behaviour.retryAfter : undefined;
      grants.set(id, { behaviour, request, polls: 0, failed: 0, notBefore: waitFor(retryAfter) });
      // A relative Location: the VNFM resolves it against the NFVO's endpoint.
      return {
        status: 202,
        headers: { Location: `/grant/v1/grants/${id}`, ...(retryAfter !== undefined ? { 'Retry-After': String(retryAfter) } : {}) },
        exchange: { body: request, early },
      };
    }
    if (path.startsWith(`${PKGM}/`) && sim.pkgmFailures > 0) {
      sim.pkgmFailures--;
      return { status: 503, headers: { 'Retry-After': '1' }, body: { status: 503, detail: 'the NFVO is busy' } };
    }
    const onboarded = new RegExp(`^${PKGM}/onboarded_vnf_packages/([^/]+)(/package_content)?$`).exec(path);
    if (req.method === 'GET' && onboarded) {
      const pkg = catalogue.get(decodeURIComponent(onboarded[1] as string));
      if (!pkg) return { status: 404, body: { status: 404, detail: `no onboarded VNF package with vnfdId ${onboarded[1]}` } };
      if (!onboarded[2]) {
        const info = pkgInfoOf(pkg);
        await conform('VnfPkgInfo', 'VnfPkgInfo', info, 'vnfpkgm-sol003');
        return { status: 200, body: info };
      }
      // SOL003 10.4.5.3.2: 409 while the package is not ONBOARDED.
      if (sim.contentConflicts > 0) {
        sim.contentConflicts--;
        return { status: 409, body: { status: 409, detail: `VNF package ${pkg.id} is PROCESSING` } };
      }
      if (pkg.onboardingState !== 'ONBOARDED') return { status: 409, body: { status: 409, detail: `VNF package ${pkg.id} is ${pkg.onboardingState}` } };
      if (!/application\/zip|\*\/\*/.test(req.headers.accept ?? ''))
        sim.nonConforming.push(`GET ${path}: Accept ${req.headers.accept} does not take application/zip`);
      return { status: 200, headers: { 'Content-Type': 'application/zip' }, raw: pkg.csar };
    }
    if (req.method === 'POST' && path === `${PKGM}/subscriptions`) {
      const request = JSON.parse(text || '{}') as NfvoPkgmSubscription['request'];
      await conform('PkgmSubscriptionRequest', 'PkgmSubscriptionRequest', request, 'vnfpkgm-sol003');
      const id = `pkgm-subscription-${++serial}`;
      const subscription: NfvoPkgmSubscription = { id, request, deliveries: [] };
      // SOL003 10.4.7.3.1: the NFVO tests the callback with a GET, which must answer 204.
      const test = await fetch(request.callbackUri, { headers: await callbackAuthorization(subscription) });
      await test.arrayBuffer();
      if (test.status !== 204) {
        return { status: 422, body: { status: 422, detail: `the callback URI answered ${test.status} to GET; 204 was expected` }, exchange: { body: request } };
      }
      sim.pkgmSubscriptions.push(subscription);
      const body = await subscriptionBody(subscription);
      return { status: 201, headers: { Location: body._links.self.href }, body, exchange: { body: request } };
    }
    const individual = new RegExp(`^${PKGM}/subscriptions/([^/]+)$`).exec(path);
    if (req.method === 'GET' && individual) {
      const subscription = sim.pkgmSubscriptions.find((candidate) => candidate.id === decodeURIComponent(individual[1] as string));
      if (!subscription) return { status: 404, body: { status: 404, detail: `no subscription ${individual[1]}` } };
      return { status: 200, body: await subscriptionBody(subscription) };
    }
    const polled = /^\/grant\/v1\/grants\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && polled) {
      const grant = grants.get(polled[1] as string);
      if (!grant) return { status: 404, body: { status: 404, detail: 'no such grant' } };
      const early = grant.notBefore !== undefined && Date.now() < grant.notBefore;
      const { behaviour } = grant;
      if (behaviour.kind === 'async' && grant.failed < (behaviour.failingPolls ?? 0)) {
        grant.failed++;
        // Waited out within the VNFM's step, unscaled, as for a POST.
        grant.notBefore = Date.now() + 1000 - EARLY_SLACK_MS;
        return { status: 503, headers: { 'Retry-After': '1' }, body: { status: 503, detail: 'the NFVO is busy' }, exchange: { early } };
      }
      grant.polls++;
      if (behaviour.kind === 'refuse') return { status: 403, body: { title: 'Grant rejected', status: 403, detail: behaviour.detail }, exchange: { early } };
      if (!released && (behaviour.kind === 'never' || (behaviour.kind === 'async' && grant.polls <= behaviour.pending))) {
        grant.notBefore = waitFor(behaviour.retryAfter);
        return { status: 202, headers: behaviour.retryAfter !== undefined ? { 'Retry-After': String(behaviour.retryAfter) } : {}, exchange: { early } };
      }
      const body = grantOf(polled[1] as string, grant.request);
      await conform('Grant (200)', 'Grant', body);
      return { status: 200, body, exchange: { early } };
    }
    return { status: 404, body: { status: 404, detail: `${req.method} ${path} is not served here` } };
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      void answer(req, text).then(async ({ status, headers, body, raw, exchange }) => {
        if (body !== undefined && status >= 400 && status !== 401 && req.url !== '/token') await conform(`ProblemDetails (${status})`, 'ProblemDetails', body);
        sim.exchanges.push({
          method: req.method ?? '',
          path: new URL(req.url ?? '/', 'http://nfvo').pathname,
          status,
          authorization: req.headers.authorization,
          version: req.headers.version as string | undefined,
          ...exchange,
        });
        if (raw) {
          res.writeHead(status, { 'Content-Length': String(raw.length), ...headers }).end(raw);
          return;
        }
        const type = status >= 400 && req.url !== '/token' ? 'application/problem+json' : 'application/json';
        res
          .writeHead(status, { ...(body !== undefined ? { 'Content-Type': type } : {}), ...headers })
          .end(body !== undefined ? JSON.stringify(body) : undefined);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sim.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return sim;
}
