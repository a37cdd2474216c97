// Test support: every exchange a test makes with the API is checked as SOL013 and the ETSI OpenAPI
// files say, whatever the test itself asserts (issue: "every integration test validates every
// exchange"). The test client (support/runtime.ts `client`) and the test NFVO (support/nfvo-sink.ts)
// call these, so a test that checks only a status still fails on a body or header that does not
// conform.
//   - Every answer under /vnflcm, /vnfpkgm, /vnffm and /vnfpm carries a Version header (SOL013 4.9).
//   - A ProblemDetails answer is a valid ProblemDetails (SOL013 6.3), with its `status` the HTTP status.
//   - A 2xx answer of a V3.7.1 API (/vnflcm/v2, /vnflcm/api_versions, /vnfpkgm/v2, /vnfpkgm/api_versions,
//     /vnffm/v1, /vnfpm/v2) is documented for its path, method and status, and its JSON body (or its absence)
//     validates. The v1 LCM and package APIs speak SOL003/SOL005 V2.6.1 (Tacker's), whose OpenAPI
//     files are not in spec/etsi: their headers and ProblemDetails are checked, and their bodies
//     carry the V2.6.1 model where it differs from V3.7.1 (v1Shape: vimConnectionInfo and cpConfig
//     are arrays, never the V3 maps).
//   - The normative rules the schemas cannot say: a list without selectors leaves out the attributes
//     the clause names for exclude_default; an op occ in FAILED_TEMP or FAILED carries `error`.
//   - The task links (SOL003 5.5.2.2 and 5.5.2.13), on /vnflcm/v1 and /vnflcm/v2 alike: a VNF
//     instance links exactly the tasks its state allows and its API version serves (instantiate
//     while NOT_INSTANTIATED; while INSTANTIATED every other LCM task on v2, and on v1 the tasks
//     Tacker's v1 serves: terminate, scale, heal, changeExtConn), each at its own path; an op occ
//     links cancel exactly while it is STARTING, PROCESSING or ROLLING_BACK, retry and fail exactly
//     in FAILED_TEMP, and rollback only in FAILED_TEMP and only where rollback is allowed; its
//     cancelMode is there exactly while isCancelPending is true, which only an op occ in progress can be.
//   - A notification is valid for its notificationType; a v1 LCM subscription's (Version 1.x) has the
//     V2.6.1 shapes above.
import { AssertionError } from 'node:assert';
import { assertEtsiResponse, assertEtsiSchema, type EtsiApi } from './etsi.ts';

interface Exchange {
  method: string;
  url: string;
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

/** The API family, its major version (undefined: an unversioned api_versions) and the path inside it. */
function apiOf(pathname: string): { family: string; major?: number; inner: string } | undefined {
  const match = /^\/(vnflcm|vnfpkgm|vnffm|vnfpm)(?:\/v(\d+))?(\/.*)?$/.exec(pathname);
  if (!match) return undefined;
  return { family: match[1]!, ...(match[2] ? { major: Number(match[2]) } : {}), inner: match[3] ?? '/' };
}

/** The V3.7.1 OpenAPI file a response of this API version is documented in, if any. */
function documentedApi(family: string, major: number | undefined): EtsiApi | undefined {
  if (family === 'vnflcm' && (major === 2 || major === undefined)) return 'vnflcm';
  if (family === 'vnfpkgm' && (major === 2 || major === undefined)) return 'vnfpkgm';
  if (family === 'vnffm' && (major === 1 || major === undefined)) return 'vnffm';
  if (family === 'vnfpm' && (major === 2 || major === undefined)) return 'vnfpm';
  return undefined;
}

const isJson = (headers: Headers): boolean => /^application\/(?:problem\+)?json\b/.test(headers.get('content-type') ?? '');

export async function checkExchange(exchange: Exchange): Promise<void> {
  const { pathname } = new URL(exchange.url);
  const api = apiOf(pathname);
  if (!api) return;
  const what = `${exchange.method} ${pathname} ${exchange.status}`;
  if (!exchange.headers.get('version')) {
    throw new AssertionError({ message: `${what}: the answer has no Version header (SOL013 4.9: every response carries it)`, operator: 'exchange' });
  }
  const contentType = exchange.headers.get('content-type') ?? '';
  if (contentType.startsWith('application/problem+json')) {
    await assertEtsiSchema(api.family === 'vnfpkgm' ? 'vnfpkgm' : 'vnflcm', 'ProblemDetails', exchange.body);
    const status = (exchange.body as { status?: unknown } | undefined)?.status;
    if (status !== exchange.status) throw new AssertionError({ message: `${what}: ProblemDetails.status is ${String(status)}`, operator: 'exchange' });
    return;
  }
  if (exchange.status < 200 || exchange.status >= 300) return;
  if (api.family === 'vnflcm' && api.major === 1 && isJson(exchange.headers)) v1Shape(exchange.body, what);
  // SOL013 5.3: `fields` and `exclude_fields` may leave out attributes the schema requires.
  const query = new URL(exchange.url).searchParams;
  const selected = query.has('fields') || query.has('exclude_fields') || query.has('exclude-fields');
  if (api.family === 'vnflcm' && api.major !== undefined && isJson(exchange.headers) && exchange.text !== '' && !selected)
    linkRules(api.major, api.inner, exchange.body, what);
  const documented = documentedApi(api.family, api.major);
  if (!documented) return;
  if (exchange.text !== '' && !isJson(exchange.headers)) return; // a package, a VNFD zip, an artifact
  if (selected) return;
  await assertEtsiResponse(documented, api.inner, exchange.method, exchange.status, exchange.text === '' ? undefined : exchange.body);
  if (exchange.method === 'GET') normativeRules(`${api.family} ${api.inner}`, query, exchange.body, what);
}

/** SOL003 5.4.2.3.2 / 5.4.12.3.2 and SOL005 9.4.2.3.2: what a list leaves out unless selectors ask for it. */
const DEFAULT_EXCLUDED: Array<[RegExp, string[]]> = [
  [/^vnflcm \/vnf_instances$/, ['vnfConfigurableProperties', 'vimConnectionInfo', 'instantiatedVnfInfo', 'metadata', 'extensions']],
  [
    /^vnflcm \/vnf_lcm_op_occs$/,
    [
      'operationParams',
      'error',
      'resourceChanges',
      'changedInfo',
      'changedExtConnectivity',
      'lcmCoordinations',
      'modificationsTriggeredByVnfPkgChange',
      'warnings',
    ],
  ],
  [/^vnfpkgm \/vnf_packages$/, ['softwareImages', 'additionalArtifacts', 'userDefinedData', 'checksum', 'onboardingFailureDetails']],
  [/^vnfpm \/pm_jobs$/, ['reports']],
];
const SELECTORS = ['all_fields', 'fields', 'exclude_fields', 'exclude-fields', 'exclude_default'];

function fail(message: string): never {
  throw new AssertionError({ message, operator: 'exchange' });
}

function normativeRules(resource: string, query: URLSearchParams, body: unknown, what: string): void {
  const excluded = DEFAULT_EXCLUDED.find(([pattern]) => pattern.test(resource))?.[1];
  if (excluded && Array.isArray(body) && !SELECTORS.some((name) => query.has(name))) {
    for (const item of body as Array<Record<string, unknown>>) {
      const present = excluded.filter((name) => name in item);
      if (present.length) fail(`${what}: a list without selectors carries ${present.join(', ')}, which the clause leaves out by default`);
    }
  }
  if (!/^vnflcm \/vnf_lcm_op_occs(\/[^/]+)?$/.test(resource)) return;
  const occs = (Array.isArray(body) ? body : [body]) as Array<{ operationState?: string; error?: unknown }>;
  const selected = query.has('fields') || query.has('exclude_fields') || query.has('exclude-fields') || (Array.isArray(body) && !query.has('all_fields'));
  for (const occ of occs) {
    const failed = occ.operationState === 'FAILED_TEMP' || occ.operationState === 'FAILED';
    if (failed && !selected && occ.error === undefined) fail(`${what}: an op occ in ${occ.operationState} carries no error (SOL003 5.5.2.13)`);
  }
}

/** SOL003 5.5.2.2: the tasks of an INSTANTIATED VNF instance, by link name, with the path each is at. */
const INSTANTIATED_TASKS: Record<string, string> = {
  terminate: 'terminate',
  scale: 'scale',
  scaleToLevel: 'scale_to_level',
  changeFlavour: 'change_flavour',
  heal: 'heal',
  operate: 'operate',
  changeExtConn: 'change_ext_conn',
  changeCurrentVnfPkg: 'change_vnfpkg',
  createSnapshot: 'create_snapshot',
  revertToSnapshot: 'revert_to_snapshot',
};
/** Those Tacker's v1 API (SOL003 V2.6.1) serves. */
const V1_INSTANTIATED_TASKS = ['terminate', 'scale', 'heal', 'changeExtConn'];
/** SOL003 5.4.17: an op occ can be cancelled in these states. */
const CANCELLABLE = ['STARTING', 'PROCESSING', 'ROLLING_BACK'];

type Links = Record<string, { href?: unknown } | undefined>;

function sameSet(what: string, kind: string, actual: string[], expected: string[]): void {
  const missing = expected.filter((name) => !actual.includes(name));
  const extra = actual.filter((name) => !expected.includes(name));
  if (missing.length || extra.length)
    fail(
      `${what}: ${kind} links ${[...actual].sort().join(', ') || 'no task'}${missing.length ? `, without ${missing.join(', ')}` : ''}${extra.length ? `, with ${extra.join(', ')} it may not link` : ''}`,
    );
}

function hrefEnds(what: string, links: Links, name: string, path: string): void {
  const href = links[name]?.href;
  if (typeof href !== 'string' || !href.endsWith(path)) fail(`${what}: _links.${name} is ${JSON.stringify(href)}, not a link to ...${path}`);
}

function linkRules(major: number, inner: string, body: unknown, what: string): void {
  const items = (Array.isArray(body) ? body : [body]).filter((item): item is Record<string, unknown> => typeof item === 'object' && item !== null);
  if (/^\/vnf_instances(\/[^/]+)?$/.test(inner)) {
    for (const instance of items) {
      const links = instance._links as Links | undefined;
      const state = instance.instantiationState;
      if (!links || typeof state !== 'string') continue;
      const self = `/vnflcm/v${major}/vnf_instances/${String(instance.id)}`;
      hrefEnds(what, links, 'self', self);
      const expected: Record<string, string> =
        state === 'NOT_INSTANTIATED'
          ? { instantiate: 'instantiate' }
          : Object.fromEntries(
              (major === 1 ? V1_INSTANTIATED_TASKS : Object.keys(INSTANTIATED_TASKS)).map((task) => [task, INSTANTIATED_TASKS[task] as string]),
            );
      sameSet(
        what,
        `a VNF instance ${state} on v${major}`,
        Object.keys(links).filter((name) => name !== 'self'),
        Object.keys(expected),
      );
      for (const [task, segment] of Object.entries(expected)) hrefEnds(what, links, task, `${self}/${segment}`);
    }
  }
  if (/^\/vnf_lcm_op_occs(\/[^/]+(\/fail)?)?$/.test(inner)) {
    for (const occ of items) {
      const links = occ._links as Links | undefined;
      const state = occ.operationState;
      if (typeof state !== 'string') continue;
      if ('isCancelPending' in occ) {
        if ((occ.isCancelPending === true) !== 'cancelMode' in occ)
          fail(
            `${what}: an op occ with isCancelPending ${String(occ.isCancelPending)} ${'cancelMode' in occ ? 'carries' : 'lacks'} cancelMode (SOL003 5.5.2.13)`,
          );
        if (occ.isCancelPending === true && !CANCELLABLE.includes(state)) fail(`${what}: an op occ in ${state} has a cancel pending`);
      }
      if (!links) continue;
      const self = `/vnflcm/v${major}/vnf_lcm_op_occs/${String(occ.id)}`;
      hrefEnds(what, links, 'self', self);
      hrefEnds(what, links, 'vnfInstance', `/vnflcm/v${major}/vnf_instances/${String(occ.vnfInstanceId)}`);
      const tasks = Object.keys(links).filter((name) => !['self', 'vnfInstance', 'grant', 'vnfSnapshot'].includes(name));
      const rollbackForbidden = occ.operation === 'TERMINATE' || occ.operation === 'HEAL';
      const expected = CANCELLABLE.includes(state)
        ? ['cancel']
        : state === 'FAILED_TEMP'
          ? ['retry', 'fail', ...(tasks.includes('rollback') && !rollbackForbidden ? ['rollback'] : [])]
          : [];
      sameSet(what, `a ${String(occ.operation)} op occ in ${state}`, tasks, expected);
      for (const task of tasks) hrefEnds(what, links, task, `${self}/${task}`);
    }
  }
}

/** SOL003 V2.6.1 (the v1 API) keeps as arrays what V3 made maps keyed by id: VnfInstance and
 * VnfInfoModifications vimConnectionInfo, VnfExtCpData cpConfig. A V3 map in a v1 body is a bug. */
const V1_ARRAYS = new Set(['vimConnectionInfo', 'cpConfig']);

function v1Shape(body: unknown, what: string, path = ''): void {
  if (Array.isArray(body)) {
    body.forEach((item, index) => {
      v1Shape(item, what, `${path}/${index}`);
    });
    return;
  }
  if (typeof body !== 'object' || body === null) return;
  for (const [key, value] of Object.entries(body)) {
    // additionalParams, extensions and metadata are the caller's own key-value pairs, in any shape.
    if (key === 'additionalParams' || key === 'extensions' || key === 'metadata' || key === 'vnfConfigurableProperties') continue;
    if (V1_ARRAYS.has(key) && !Array.isArray(value)) fail(`${what}: ${path}/${key} is not an array, as the v1 API (SOL003 V2.6.1) has it`);
    v1Shape(value, what, `${path}/${key}`);
  }
}

const LCM_NOTIFICATIONS = new Set(['VnfLcmOperationOccurrenceNotification', 'VnfIdentifierCreationNotification', 'VnfIdentifierDeletionNotification']);
const FM_NOTIFICATIONS = new Set(['AlarmNotification', 'AlarmClearedNotification', 'AlarmListRebuiltNotification']);
const PM_NOTIFICATIONS = new Set(['PerformanceInformationAvailableNotification', 'ThresholdCrossedNotification']);

/** Why a received notification does not conform, or undefined when it does (or is not one this checks). */
export async function notificationProblem(body: unknown, version: string | undefined): Promise<string | undefined> {
  const type = (body as { notificationType?: unknown } | undefined)?.notificationType;
  if (typeof type !== 'string') return undefined;
  if (!version) return `${type}: no Version header`;
  try {
    if (LCM_NOTIFICATIONS.has(type) && version.startsWith('1.')) v1Shape(body, type);
    else if (LCM_NOTIFICATIONS.has(type)) await assertEtsiSchema('vnflcm-notification', type, body);
    else if (FM_NOTIFICATIONS.has(type)) await assertEtsiSchema('vnffm-notification', type, body);
    else if (PM_NOTIFICATIONS.has(type)) await assertEtsiSchema('vnfpm-notification', type, body);
  } catch (error) {
    return (error as Error).message;
  }
  return undefined;
}
