// API function for the VIM registry: the product's /vnfm/v1/vims (VIMs as SOL003 VimConnectionInfo
// with a name, status and default flag) and Tacker's legacy NFVO /v1.0/vims, which
// python3-tackerclient's `openstack vim register|list|show|set|delete` speak (with or without the
// ".json" suffix the client appends). Credentials are masked in every answer.
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import { BadRequestError } from '#lib/sol/errors.ts';
import { matchesFilter, parseFilter } from '#lib/sol/filter.ts';
import { vimRegistryDeps } from '#lib/deps.ts';
import {
  productModificationOf,
  productRegistrationOf,
  renderTackerVim,
  renderVim,
  tackerModificationOf,
  tackerRegistrationOf,
} from '#lib/vim-connections/model.ts';
import { deleteVim, getVim, listVims, modifyVim, registerVim } from '#lib/vim-connections/service.ts';
import { httpApi, route, type ApiRequest, type RouteMethods, type RouteTable } from './common/http.ts';

const vimId = (request: ApiRequest) => (request.params.vimId ?? '').replace(/\.json$/, '');

/** GET /vnfm/v1/vims: SOL013 attribute filtering on the representation (credentials are masked before it runs). */
function productFilter(params: URLSearchParams): (item: Record<string, unknown>) => boolean {
  for (const name of params.keys()) if (name !== 'filter') throw new BadRequestError(`Unknown query parameter "${name}"`);
  const raw = params.get('filter');
  if (raw === null) return () => true;
  const filter = parseFilter(raw);
  return (item) => matchesFilter(filter, item);
}

/** Tacker's list query: attribute=value equality (repeatable) and fields=... projections. */
function tackerQuery(params: URLSearchParams): {
  matches: (item: Record<string, unknown>) => boolean;
  project: (item: Record<string, unknown>) => Record<string, unknown>;
} {
  const fields = params
    .getAll('fields')
    .flatMap((f) => f.split(','))
    .filter(Boolean);
  const wanted = new Map<string, string[]>();
  for (const [key, value] of params) if (key !== 'fields') wanted.set(key, [...(wanted.get(key) ?? []), value]);
  return {
    matches: (item) => [...wanted].every(([key, values]) => values.includes(String(item[key]))),
    project: (item) => (fields.length ? Object.fromEntries(fields.filter((f) => f in item).map((f) => [f, item[f]])) : item),
  };
}

// The registration and modification bodies are checked by lib/vim-connections/model.ts, which asks
// the VIM type's driver what its credentials must hold, so these routes take the JSON as sent.
const product: RouteMethods = {
  POST: {
    handler: async (request) => {
      const record = await registerVim(vimRegistryDeps(), request.caller, await productRegistrationOf(request.body));
      const body = renderVim(record, request.baseUrl);
      return { status: 201, body, headers: { Location: `${request.baseUrl}/vnfm/v1/vims/${record.id}` } };
    },
  },
  GET: route({
    query: productFilter,
    handler: async (request) => {
      const items = (await listVims(vimRegistryDeps(), request.caller)).map((vim) => renderVim(vim, request.baseUrl)).filter(request.query);
      return { status: 200, body: items };
    },
  }),
};

const productItem: RouteMethods = {
  GET: { handler: async (request) => ({ status: 200, body: renderVim(await getVim(vimRegistryDeps(), request.caller, vimId(request)), request.baseUrl) }) },
  PATCH: {
    handler: async (request) => {
      const record = await modifyVim(vimRegistryDeps(), request.caller, vimId(request), productModificationOf(request.body));
      return { status: 200, body: renderVim(record, request.baseUrl) };
    },
  },
  DELETE: {
    handler: async (request) => {
      await deleteVim(vimRegistryDeps(), request.caller, vimId(request));
      return { status: 204 };
    },
  },
};

const tacker: RouteMethods = {
  POST: {
    handler: async (request) => {
      const record = await registerVim(vimRegistryDeps(), request.caller, await tackerRegistrationOf(request.body));
      return { status: 201, body: { vim: await renderTackerVim(record) } };
    },
  },
  GET: route({
    query: tackerQuery,
    handler: async (request) => {
      const vims = (await Promise.all((await listVims(vimRegistryDeps(), request.caller)).map(renderTackerVim)))
        .filter(request.query.matches)
        .map(request.query.project);
      return { status: 200, body: { vims } };
    },
  }),
};

const tackerItem: RouteMethods = {
  GET: { handler: async (request) => ({ status: 200, body: { vim: await renderTackerVim(await getVim(vimRegistryDeps(), request.caller, vimId(request))) } }) },
  PUT: {
    handler: async (request) => {
      const deps = vimRegistryDeps();
      const current = await getVim(deps, request.caller, vimId(request));
      const record = await modifyVim(deps, request.caller, current.id, await tackerModificationOf(request.body, current.vimType));
      return { status: 200, body: { vim: await renderTackerVim(record) } };
    },
  },
  DELETE: productItem.DELETE,
};

export const routes: RouteTable = {
  '/vnfm/v1/vims': product,
  '/vnfm/v1/vims/{vimId}': productItem,
  '/v1.0/vims': tacker,
  '/v1.0/vims.json': tacker,
  '/v1.0/vims/{vimId}': tackerItem,
};

export const handler = httpApi(routes);
