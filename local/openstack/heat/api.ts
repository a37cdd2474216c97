// Heat's v1 REST API over the engine: stacks (create 201, lookup by name -> 302, show, PATCH/PUT
// update 202, delete 204, list), resources (nested_depth listing with parent_resource and nested
// links, show with attributes, mark_unhealthy, signal), events, outputs, template and validate,
// with Heat's error body ({explanation, code, error: {message, traceback, type}, title}).
import { empty, json, Router, type SimReply, type SimRequest } from '../http.ts';
import type { Token } from '../keystone.ts';
import { ApiError, isoSeconds, isRecord, type Cloud } from '../state.ts';
import type { CreateRequest, HeatEngine } from './engine.ts';
import type { Resource, Stack } from './model.ts';
import { paramSchemas, parseDocument, showParam, templateVersion } from './template.ts';

const TITLES: Record<number, [string, string]> = {
  400: ['Bad Request', 'The server could not comply with the request since it is either malformed or otherwise incorrect.'],
  401: ['Unauthorized', 'This server could not verify that you are authorized to access the document you requested.'],
  403: ['Forbidden', 'Access was denied to this resource.'],
  404: ['Not Found', 'The resource could not be found.'],
  405: ['Method Not Allowed', 'The method specified is not allowed for this resource.'],
  409: ['Conflict', 'There was a conflict when trying to complete your request.'],
  413: ['Request Entity Too Large', 'The request is larger than the server is willing or able to process.'],
  500: ['Internal Server Error', 'The server has either erred or is incapable of performing the requested operation.'],
};

export function heatError(err: ApiError): SimReply {
  const [title, explanation] = TITLES[err.status] ?? ['Error', ''];
  const type = err.type ?? (err.status === 404 ? 'EntityNotFound' : err.status === 500 ? 'InternalServerError' : `HTTP${title.replaceAll(' ', '')}`);
  return json(err.status, { explanation, code: err.status, error: { message: err.message, traceback: null, type }, title });
}

interface Ctx {
  token: Token;
  project: string;
}

export class HeatApi {
  readonly router = new Router<Ctx>();

  constructor(
    private readonly cloud: Cloud,
    private readonly engine: HeatEngine,
  ) {
    this.#routes();
  }

  #base(req: SimRequest, projectId: string): string {
    return `${req.origin}/heat-api/v1/${projectId}`;
  }

  stackLink(req: SimRequest, s: Stack): string {
    return `${this.#base(req, s.projectId)}/stacks/${encodeURIComponent(s.name)}/${s.id}`;
  }

  /** A stack by name and id, as Heat identifies it (the name must match; deleted ones are found by id). */
  #identified(ctx: Ctx, name: string, id: string): Stack {
    const s = this.engine.stacks.get(id);
    if (!s || s.projectId !== ctx.project || s.name !== name) throw new ApiError(404, `The Stack (${name}) could not be found.`, 'EntityNotFound');
    return s;
  }

  #live(ctx: Ctx, name: string, id: string): Stack {
    const s = this.#identified(ctx, name, id);
    if (s.deleted) throw new ApiError(404, `The Stack (${name}) could not be found.`, 'EntityNotFound');
    return s;
  }

  stackBody(req: SimRequest, s: Stack, full: boolean): Record<string, unknown> {
    const body: Record<string, unknown> = {
      id: s.id,
      stack_name: s.name,
      description: typeof s.template.description === 'string' ? s.template.description : 'No description',
      creation_time: isoSeconds(s.createdAt),
      updated_time: s.updatedAt === null ? null : isoSeconds(s.updatedAt),
      deletion_time: s.deletedAt === null ? null : isoSeconds(s.deletedAt),
      stack_status: s.state,
      stack_status_reason: s.reason,
      stack_owner: s.owner.user.name,
      stack_user_project_id: s.projectId,
      parent: s.parent ? s.parent.stack.id : null,
      tags: s.tags,
      links: [{ href: this.stackLink(req, s), rel: 'self' }],
    };
    if (!full) return body;
    const schemas = s.schemas;
    const parameters: Record<string, string> = {};
    for (const [key, value] of s.params) parameters[key] = showParam(schemas.get(key), value);
    parameters['OS::stack_id'] = s.id;
    parameters['OS::stack_name'] = s.name;
    parameters['OS::project_id'] = s.projectId;
    Object.assign(body, {
      parameters,
      template_description: body.description,
      capabilities: [],
      notification_topics: [],
      disable_rollback: s.disableRollback,
      timeout_mins: s.timeoutMins,
    });
    if (!(s.action === 'DELETE' && s.status === 'COMPLETE')) body.outputs = this.engine.outputs(s);
    return body;
  }

  resourceBody(req: SimRequest, s: Stack, r: Resource, detail: boolean): Record<string, unknown> {
    const stackLink = this.stackLink(req, s);
    const links = [
      { href: `${stackLink}/resources/${encodeURIComponent(r.name)}`, rel: 'self' },
      { href: stackLink, rel: 'stack' },
    ];
    const nestedId = r.plugin.nestedStackId?.(r);
    const nested = nestedId ? this.engine.stacks.get(nestedId) : undefined;
    if (nested) links.push({ href: this.stackLink(req, nested), rel: 'nested' });
    const requiredBy = [...s.resources.values()]
      .filter(
        (o) =>
          o !== r &&
          this.engine
            .dependencies(
              o.def,
              s.version,
              new Set(s.resources.keys()),
              [...s.resources.values()].map((x) => x.def),
            )
            .includes(r.name),
      )
      .map((o) => o.name);
    const body: Record<string, unknown> = {
      resource_name: r.name,
      logical_resource_id: r.name,
      physical_resource_id: r.physicalId,
      resource_type: r.type,
      resource_status: r.state,
      resource_status_reason: r.reason,
      creation_time: isoSeconds(r.createdAt),
      updated_time: isoSeconds(r.updatedAt ?? r.createdAt),
      required_by: requiredBy,
      links,
    };
    if (s.parent) body.parent_resource = s.parent.resourceName;
    if (detail) {
      body.description = '';
      const attributes: Record<string, unknown> = {};
      const names = r.plugin.attributes;
      if (Array.isArray(names)) {
        for (const name of names) {
          try {
            attributes[name] = this.engine.attribute(s, r, name, []);
          } catch {
            attributes[name] = null;
          }
        }
      }
      body.attributes = attributes;
    }
    return body;
  }

  #resources(req: SimRequest, s: Stack, depth: number, detail: boolean, out: Array<Record<string, unknown>>): void {
    const nested: Stack[] = [];
    for (const r of s.resources.values()) {
      out.push(this.resourceBody(req, s, r, detail));
      const id = r.plugin.nestedStackId?.(r);
      const child = id ? this.engine.stacks.get(id) : undefined;
      if (child && !child.deleted && depth > 0) nested.push(child);
    }
    for (const child of nested) this.#resources(req, child, depth - 1, detail, out);
  }

  #routes(): void {
    const r = this.router;
    const redirect = (req: SimRequest, s: Stack, suffix = ''): SimReply => {
      const location = `${this.stackLink(req, s)}${suffix}${req.query.toString() ? `?${req.query.toString()}` : ''}`;
      return {
        status: 302,
        headers: { location },
        body: `The resource was found at ${location}; you should be redirected automatically.`,
        contentType: 'text/plain; charset=UTF-8',
      };
    };
    const lookup = (ctx: Ctx, ref: string): Stack => {
      const s = this.engine.lookup(ctx.project, ref);
      if (!s) throw new ApiError(404, `The Stack (${ref}) could not be found.`, 'EntityNotFound');
      return s;
    };
    const body = async (req: SimRequest): Promise<CreateRequest> => {
      const b = await req.json();
      if (!isRecord(b))
        throw new ApiError(400, 'The server could not comply with the request since it is either malformed or otherwise incorrect.', 'HTTPBadRequest');
      return b;
    };

    r.on('GET', '/stacks', (req, _p, ctx) => {
      const q = req.query;
      let list = [...this.engine.stacks.values()].filter((s) => s.projectId === ctx.project);
      if (q.get('show_deleted') !== 'True' && q.get('show_deleted') !== 'true') list = list.filter((s) => !s.deleted);
      if (q.get('show_nested') !== 'True' && q.get('show_nested') !== 'true') list = list.filter((s) => !s.parent);
      for (const name of q.getAll('stack_name')) list = list.filter((s) => s.name === name);
      const statuses = q.getAll('status');
      if (statuses.length > 0) list = list.filter((s) => statuses.includes(s.status));
      const ids = q.getAll('id');
      if (ids.length > 0) list = list.filter((s) => ids.includes(s.id));
      list.sort((a, b) => b.createdAt - a.createdAt);
      const limit = q.get('limit') === null ? list.length : Number(q.get('limit'));
      const marker = q.get('marker');
      if (marker) list = list.slice(list.findIndex((s) => s.id === marker) + 1);
      return json(200, { stacks: list.slice(0, limit).map((s) => this.stackBody(req, s, false)) });
    });
    r.on('POST', '/stacks', async (req, _p, ctx) => {
      const s = this.engine.create(ctx.token, await body(req));
      const link = this.stackLink(req, s);
      return json(201, { stack: { id: s.id, links: [{ href: link, rel: 'self' }] } }, { location: link });
    });
    r.on('POST', '/validate', async (req, _p, ctx) => {
      const b = await body(req);
      const template = parseDocument(b.template, 'template');
      templateVersion(template);
      this.engine.params(
        template,
        isRecord(b.parameters) ? b.parameters : {},
        { parameters: {}, parameter_defaults: {}, resource_registry: {} },
        ctx.project,
        true,
      );
      const out: Record<string, unknown> = {};
      for (const [name, schema] of paramSchemas(template)) {
        out[name] = {
          Type: { string: 'String', number: 'Number', json: 'Json', comma_delimited_list: 'CommaDelimitedList', boolean: 'Boolean' }[schema.type],
          Description: schema.description ?? '',
          Label: schema.label ?? name,
          NoEcho: schema.hidden ? 'true' : 'false',
          ...('default' in schema ? { Default: schema.default } : {}),
        };
      }
      return json(200, { Description: typeof template.description === 'string' ? template.description : 'No description', Parameters: out });
    });
    r.on('GET', '/resource_types', () =>
      json(200, {
        resource_types: [
          'OS::Nova::Server',
          'OS::Nova::ServerGroup',
          'OS::Neutron::Net',
          'OS::Neutron::Subnet',
          'OS::Neutron::Port',
          'OS::Cinder::Volume',
          'OS::Heat::AutoScalingGroup',
          'OS::Heat::ResourceGroup',
          'OS::Heat::ScalingPolicy',
          'OS::Heat::SoftwareConfig',
          'OS::Heat::SoftwareDeployment',
          'OS::Heat::RandomString',
          'OS::Heat::TestResource',
          'OS::Heat::None',
          'OS::Heat::Value',
        ],
      }),
    );

    // Heat's lookup: a stack named (or identified) without its id redirects, whatever the method.
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])
      r.on(method, '/stacks/:name', (req, { name = '' }, ctx) => redirect(req, lookup(ctx, name)));
    for (const sub of ['resources', 'events', 'template', 'actions', 'environment', 'files']) {
      r.on('GET', `/stacks/:name/${sub}`, (req, { name = '' }, ctx) => redirect(req, lookup(ctx, name), `/${sub}`));
      if (!['environment', 'files'].includes(sub))
        r.on('POST', `/stacks/:name/${sub}`, (req, { name = '' }, ctx) => redirect(req, lookup(ctx, name), `/${sub}`));
    }
    r.on('GET', '/stacks/:name/:id', (req, { name = '', id = '' }, ctx) => json(200, { stack: this.stackBody(req, this.#identified(ctx, name, id), true) }));
    r.on('PUT', '/stacks/:name/:id', async (req, { name = '', id = '' }, ctx) => {
      this.engine.update(this.#live(ctx, name, id), await body(req), false);
      return empty(202);
    });
    r.on('PATCH', '/stacks/:name/:id', async (req, { name = '', id = '' }, ctx) => {
      this.engine.update(this.#live(ctx, name, id), await body(req), true);
      return empty(202);
    });
    r.on('DELETE', '/stacks/:name/:id', (_req, { name = '', id = '' }, ctx) => {
      this.engine.delete(this.#live(ctx, name, id));
      return empty(204);
    });
    r.on('POST', '/stacks/:name/:id/actions', (_req, { name = '', id = '' }, ctx) => {
      this.#live(ctx, name, id);
      throw new ApiError(400, 'Stack actions (check, suspend, resume, cancel_update) are not supported by the simulator.', 'NotSupported');
    });
    r.on('GET', '/stacks/:name/:id/template', (_req, { name = '', id = '' }, ctx) => json(200, this.#identified(ctx, name, id).template));
    r.on('GET', '/stacks/:name/:id/environment', (_req, { name = '', id = '' }, ctx) => {
      const s = this.#identified(ctx, name, id);
      return json(200, {
        parameters: s.userParams,
        parameter_defaults: s.env.parameter_defaults,
        resource_registry: { resources: {}, ...s.env.resource_registry },
        encrypted_param_names: [],
        event_sinks: [],
      });
    });
    r.on('GET', '/stacks/:name/:id/files', (_req, { name = '', id = '' }, ctx) => json(200, this.#identified(ctx, name, id).files));
    r.on('GET', '/stacks/:name/:id/outputs', (_req, { name = '', id = '' }, ctx) => {
      const s = this.#identified(ctx, name, id);
      const outputs = isRecord(s.template.outputs) ? s.template.outputs : {};
      return json(200, {
        outputs: Object.entries(outputs).map(([key, o]) => ({
          output_key: key,
          description: isRecord(o) && typeof o.description === 'string' ? o.description : 'No description given',
        })),
      });
    });
    r.on('GET', '/stacks/:name/:id/outputs/:key', (_req, { name = '', id = '', key = '' }, ctx) => {
      const out = this.engine.outputs(this.#identified(ctx, name, id)).find((o) => o.output_key === key);
      if (!out) throw new ApiError(404, `Specified output key ${key} not found.`, 'NotFound');
      return json(200, { output: out });
    });

    r.on('GET', '/stacks/:name/:id/resources', (req, { name = '', id = '' }, ctx) => {
      const s = this.#identified(ctx, name, id);
      const q = req.query;
      const allowed = ['type', 'status', 'name', 'action', 'id', 'physical_resource_id', 'nested_depth', 'with_detail'];
      const invalid = [...new Set(q.keys())].filter((k) => !allowed.includes(k));
      if (invalid.length > 0) throw new ApiError(400, `Invalid filter parameters ${JSON.stringify(invalid).replaceAll('"', "'")}`, 'HTTPBadRequest');
      const depthText = q.get('nested_depth') ?? '0';
      const depth = Number(depthText);
      if (!Number.isInteger(depth) || depth < 0) throw new ApiError(400, `Only integer is acceptable by 'nested_depth'.`, 'HTTPBadRequest');
      const detail = q.get('with_detail') === 'true' || q.get('with_detail') === 'True';
      const out: Array<Record<string, unknown>> = [];
      if (!s.deleted) this.#resources(req, s, depth, detail, out);
      const filters: Array<[string, (r: Record<string, unknown>) => string]> = [
        ['type', (x) => String(x.resource_type)],
        ['name', (x) => String(x.resource_name)],
        ['physical_resource_id', (x) => String(x.physical_resource_id)],
        ['status', (x) => String(x.resource_status).split('_').slice(1).join('_')],
        ['action', (x) => String(x.resource_status).split('_')[0] ?? ''],
      ];
      let list = out;
      for (const [key, get] of filters) {
        const wanted = q.getAll(key);
        if (wanted.length > 0) list = list.filter((x) => wanted.includes(get(x)));
      }
      return json(200, { resources: list });
    });
    r.on('GET', '/stacks/:name/:id/resources/:res', (req, { name = '', id = '', res = '' }, ctx) => {
      const s = this.#identified(ctx, name, id);
      const found = s.resources.get(res);
      if (!found || s.deleted) throw new ApiError(404, `The Resource (${res}) could not be found.`, 'EntityNotFound');
      return json(200, { resource: this.resourceBody(req, s, found, true) });
    });
    r.on('PATCH', '/stacks/:name/:id/resources/:res', async (req, { name = '', id = '', res = '' }, ctx) => {
      const s = this.#live(ctx, name, id);
      const b = (await body(req)) as Record<string, unknown>;
      if (!('mark_unhealthy' in b)) throw new ApiError(400, 'Missing mandatory (mark_unhealthy) key from mark unhealthy request', 'HTTPBadRequest');
      const mark = b.mark_unhealthy;
      if (typeof mark !== 'boolean' && !['true', 'false', 'True', 'False'].includes(String(mark)))
        throw new ApiError(400, `Unrecognized value "${String(mark)}" for "mark_unhealthy", acceptable values are: true, false.`, 'HTTPBadRequest');
      const extra = Object.keys(b).filter((k) => k !== 'mark_unhealthy' && k !== 'resource_status_reason');
      if (extra.length > 0) throw new ApiError(400, `Invalid keys in resource mark unhealthy ${JSON.stringify(extra)}`, 'HTTPBadRequest');
      this.engine.markUnhealthy(
        s,
        res,
        mark === true || String(mark).toLowerCase() === 'true',
        typeof b.resource_status_reason === 'string' ? b.resource_status_reason : '',
      );
      return json(200, null);
    });
    r.on('POST', '/stacks/:name/:id/resources/:res/signal', async (req, { name = '', id = '', res = '' }, ctx) => {
      this.engine.signal(this.#live(ctx, name, id), res, await req.json());
      return empty(200);
    });
    const events = (req: SimRequest, s: Stack, only?: string): SimReply => {
      let list = s.events.filter((e) => !only || e.resourceName === only);
      const q = req.query;
      for (const n of q.getAll('resource_name')) list = list.filter((e) => e.resourceName === n);
      for (const st of q.getAll('resource_status')) list = list.filter((e) => e.status === st || `${e.action}_${e.status}` === st);
      for (const a of q.getAll('resource_action')) list = list.filter((e) => e.action === a);
      if (q.get('sort_dir') === 'desc') list = [...list].reverse();
      const marker = q.get('marker');
      if (marker) list = list.slice(list.findIndex((e) => e.id === marker) + 1);
      const limit = q.get('limit') === null ? list.length : Number(q.get('limit'));
      const link = this.stackLink(req, s);
      return json(200, {
        events: list.slice(0, limit).map((e) => ({
          id: e.id,
          event_time: isoSeconds(e.time),
          resource_name: e.resourceName,
          logical_resource_id: e.resourceName,
          physical_resource_id: e.physicalId,
          resource_status: `${e.action}_${e.status}`,
          resource_status_reason: e.reason,
          resource_type: e.resourceType,
          links: [
            { href: `${link}/resources/${encodeURIComponent(e.resourceName)}/events/${e.id}`, rel: 'self' },
            { href: `${link}/resources/${encodeURIComponent(e.resourceName)}`, rel: 'resource' },
            { href: link, rel: 'stack' },
          ],
        })),
      });
    };
    r.on('GET', '/stacks/:name/:id/events', (req, { name = '', id = '' }, ctx) => events(req, this.#identified(ctx, name, id)));
    r.on('GET', '/stacks/:name/:id/resources/:res/events', (req, { name = '', id = '', res = '' }, ctx) => events(req, this.#identified(ctx, name, id), res));
  }

  /** Heat checks the project in the URL against the token's (admins may use any). */
  context(token: Token, project: string): Ctx {
    if (token.project?.id !== project && !this.cloud.keystone.isAdmin(token)) {
      throw new ApiError(403, 'You are not authorized to use stacks of another project.', 'Forbidden');
    }
    return { token, project };
  }
}
