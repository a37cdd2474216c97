// Keystone v3 as devstack sets it up: domain Default, projects admin/demo, users admin/demo
// (password "devstack"), password and token authentication with project scope, Fernet-looking
// tokens that expire, token validation, and the service catalog every other service is found by.
import { randomBytes } from 'node:crypto';
import { empty, json, Router, type SimReply, type SimRequest } from './http.ts';
import { ApiError, hexId, isoMicros, isRecord, type Cloud } from './state.ts';

export interface Domain {
  id: string;
  name: string;
}
export interface Project {
  id: string;
  name: string;
  domainId: string;
  description: string;
}
export interface User {
  id: string;
  name: string;
  domainId: string;
  password: string;
  defaultProjectId: string;
}
export interface Role {
  id: string;
  name: string;
}
export interface Token {
  id: string;
  user: User;
  project: Project | undefined;
  roles: Role[];
  methods: string[];
  issuedAt: number;
  expiresAt: number;
  auditId: string;
  revoked: boolean;
}

export interface CatalogService {
  id: string;
  type: string;
  name: string;
  /** Path below the public base; "{project_id}" is substituted per token. */
  path: string;
}

const CATALOG: Array<Omit<CatalogService, 'id'>> = [
  { type: 'identity', name: 'keystone', path: '/identity' },
  { type: 'image', name: 'glance', path: '/image' },
  { type: 'compute', name: 'nova', path: '/compute/v2.1' },
  { type: 'network', name: 'neutron', path: '/networking' },
  { type: 'volumev3', name: 'cinderv3', path: '/volume/v3/{project_id}' },
  { type: 'block-storage', name: 'cinder', path: '/volume/v3/{project_id}' },
  { type: 'orchestration', name: 'heat', path: '/heat-api/v1/{project_id}' },
];

export const DEFAULT_PASSWORD = 'devstack';

/** Keystone's own error shape. */
export function keystoneError(err: ApiError): SimReply {
  const titles: Record<number, string> = {
    400: 'Bad Request',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'Not Found',
    405: 'Method Not Allowed',
    409: 'Conflict',
    413: 'Request Entity Too Large',
    500: 'Internal Server Error',
  };
  return json(err.status, { error: { code: err.status, message: err.message, title: titles[err.status] ?? 'Error' } });
}

const UNAUTHORIZED = 'The request you have made requires authentication.';

export class Keystone {
  readonly domain: Domain = { id: 'default', name: 'Default' };
  readonly projects: Project[];
  readonly users: User[];
  readonly roles: Role[];
  /** user id -> project id -> role ids */
  readonly #assignments = new Map<string, Map<string, string[]>>();
  readonly #tokens = new Map<string, Token>();
  readonly catalogServices: CatalogService[] = CATALOG.map((s) => ({ ...s, id: hexId() }));
  readonly #endpointIds = new Map<string, string>();
  readonly router = new Router<Keystone>();

  constructor(
    private readonly cloud: Cloud,
    readonly tokenTtlSeconds: number,
  ) {
    const admin: Project = { id: hexId(), name: 'admin', domainId: 'default', description: 'Bootstrap project for initializing the cloud.' };
    const demo: Project = { id: hexId(), name: 'demo', domainId: 'default', description: '' };
    const service: Project = { id: hexId(), name: 'service', domainId: 'default', description: '' };
    this.projects = [admin, demo, service];
    this.roles = ['admin', 'member', 'reader', 'heat_stack_owner'].map((name) => ({ id: hexId(), name }));
    this.users = [
      { id: hexId(), name: 'admin', domainId: 'default', password: DEFAULT_PASSWORD, defaultProjectId: admin.id },
      { id: hexId(), name: 'demo', domainId: 'default', password: DEFAULT_PASSWORD, defaultProjectId: demo.id },
    ];
    const [adminUser, demoUser] = this.users as [User, User];
    const role = (name: string) => this.roles.find((r) => r.name === name)?.id ?? '';
    this.#assignments.set(
      adminUser.id,
      new Map([
        [admin.id, [role('admin'), role('member'), role('reader')]],
        [demo.id, [role('admin'), role('member'), role('reader')]],
      ]),
    );
    this.#assignments.set(demoUser.id, new Map([[demo.id, [role('member'), role('reader'), role('heat_stack_owner')]]]));
    for (const svc of this.catalogServices) for (const iface of ['public', 'internal', 'admin']) this.#endpointIds.set(`${svc.id}/${iface}`, hexId());
    this.#routes();
  }

  get adminProject(): Project {
    return this.projects[0] as Project;
  }

  /** The token behind X-Auth-Token, if it is known, unrevoked and unexpired. */
  validate(tokenId: string | undefined): Token | undefined {
    if (!tokenId) return undefined;
    const token = this.#tokens.get(tokenId);
    if (!token || token.revoked || token.expiresAt <= Date.now()) return undefined;
    return token;
  }

  /** Makes every token issued so far expire now (the control API's way to test re-authentication). */
  expireAll(): number {
    const now = Date.now();
    let n = 0;
    for (const token of this.#tokens.values()) {
      if (token.expiresAt > now) n++;
      token.expiresAt = Math.min(token.expiresAt, now - 1);
    }
    return n;
  }

  isAdmin(token: Token): boolean {
    return token.roles.some((r) => r.name === 'admin');
  }

  project(id: string): Project | undefined {
    return this.projects.find((p) => p.id === id);
  }

  catalog(project: Project | undefined): unknown[] {
    return this.catalogServices.map((svc) => ({
      endpoints: ['public', 'internal', 'admin'].map((iface) => ({
        id: this.#endpointIds.get(`${svc.id}/${iface}`),
        interface: iface,
        region: this.cloud.region,
        region_id: this.cloud.region,
        url: this.cloud.publicBase + svc.path.replace('{project_id}', project?.id ?? '$(project_id)s'),
      })),
      id: svc.id,
      type: svc.type,
      name: svc.name,
    }));
  }

  /** POST /v3/auth/tokens. */
  authenticate(body: unknown): Token {
    const auth = isRecord(body) ? body.auth : undefined;
    if (!isRecord(auth)) throw new ApiError(400, "Invalid input for field 'auth': 'auth' is a required property", 'ValidationError');
    const identity = auth.identity;
    if (!isRecord(identity)) throw new ApiError(400, "Invalid input for field 'identity': 'identity' is a required property", 'ValidationError');
    const methods = identity.methods;
    if (!Array.isArray(methods) || methods.length === 0 || !methods.every((m) => typeof m === 'string')) {
      throw new ApiError(400, "Invalid input for field 'identity/methods': 'methods' is a required property", 'ValidationError');
    }
    let user: User | undefined;
    let inherited: Token | undefined;
    if (methods.includes('password')) {
      const pw = isRecord(identity.password) ? identity.password.user : undefined;
      if (!isRecord(pw)) throw new ApiError(400, "Invalid input for field 'identity/password/user': 'user' is a required property", 'ValidationError');
      user = this.#findUser(pw);
      if (!user || typeof pw.password !== 'string' || pw.password !== user.password) throw new ApiError(401, UNAUTHORIZED);
    } else if (methods.includes('token')) {
      const id = isRecord(identity.token) ? identity.token.id : undefined;
      inherited = this.validate(typeof id === 'string' ? id : undefined);
      if (!inherited) throw new ApiError(401, UNAUTHORIZED);
      user = inherited.user;
    } else {
      throw new ApiError(401, `Attempted to authenticate with an unsupported method.`);
    }
    let project: Project | undefined;
    const scope = auth.scope;
    if (isRecord(scope) && scope.project !== undefined) {
      const ref = scope.project;
      if (!isRecord(ref)) throw new ApiError(400, "Invalid input for field 'scope/project': not an object", 'ValidationError');
      project = this.#findProject(ref);
      if (!project) throw new ApiError(401, UNAUTHORIZED);
    } else if (isRecord(scope) && (scope.domain !== undefined || scope.system !== undefined)) {
      throw new ApiError(401, 'The simulator only issues project-scoped or unscoped tokens.');
    } else if (inherited?.project) {
      project = inherited.project;
    }
    let roles: Role[] = [];
    if (project) {
      const ids = this.#assignments.get(user.id)?.get(project.id) ?? [];
      if (ids.length === 0) throw new ApiError(401, `User ${user.id} has no access to project ${project.id}`);
      roles = this.roles.filter((r) => ids.includes(r.id));
    }
    const now = Date.now();
    const token: Token = {
      id: fernetLike(),
      user,
      project,
      roles,
      methods: methods as string[],
      issuedAt: now,
      expiresAt: inherited ? inherited.expiresAt : now + this.tokenTtlSeconds * 1000,
      auditId: randomBytes(16).toString('base64url').slice(0, 22),
      revoked: false,
    };
    this.#tokens.set(token.id, token);
    return token;
  }

  tokenBody(token: Token, withCatalog: boolean): unknown {
    const domain = { id: this.domain.id, name: this.domain.name };
    return {
      token: {
        methods: token.methods,
        user: { domain, id: token.user.id, name: token.user.name, password_expires_at: null },
        audit_ids: [token.auditId],
        expires_at: isoMicros(token.expiresAt),
        issued_at: isoMicros(token.issuedAt),
        ...(token.project
          ? {
              project: { domain, id: token.project.id, name: token.project.name },
              is_domain: false,
              roles: token.roles.map((r) => ({ id: r.id, name: r.name })),
              ...(withCatalog ? { catalog: this.catalog(token.project) } : {}),
            }
          : {}),
      },
    };
  }

  #findUser(ref: Record<string, unknown>): User | undefined {
    if (typeof ref.id === 'string') return this.users.find((u) => u.id === ref.id);
    if (typeof ref.name !== 'string') return undefined;
    const domain = this.#domainOf(ref.domain);
    if (!domain) return undefined;
    return this.users.find((u) => u.name === ref.name && u.domainId === domain.id);
  }

  #findProject(ref: Record<string, unknown>): Project | undefined {
    if (typeof ref.id === 'string') return this.projects.find((p) => p.id === ref.id);
    if (typeof ref.name !== 'string') return undefined;
    const domain = this.#domainOf(ref.domain);
    if (!domain) return undefined;
    return this.projects.find((p) => p.name === ref.name && p.domainId === domain.id);
  }

  #domainOf(ref: unknown): Domain | undefined {
    if (!isRecord(ref)) return undefined;
    if (ref.id === this.domain.id || ref.name === this.domain.name) return this.domain;
    return undefined;
  }

  #requireToken(req: SimRequest): Token {
    const token = this.validate(header(req, 'x-auth-token'));
    if (!token) throw new ApiError(401, UNAUTHORIZED);
    return token;
  }

  #requireAdmin(req: SimRequest, action: string): Token {
    const token = this.#requireToken(req);
    if (!this.isAdmin(token)) throw new ApiError(403, `You are not authorized to perform the requested action: identity:${action}.`);
    return token;
  }

  #versionDoc(req: SimRequest): Record<string, unknown> {
    return {
      id: 'v3.14',
      status: 'stable',
      updated: '2020-04-07T00:00:00Z',
      links: [{ rel: 'self', href: `${req.origin}/identity/v3/` }],
      'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }],
    };
  }

  #routes(): void {
    const r = this.router;
    r.on('GET', '/', (req) => json(300, { versions: { values: [this.#versionDoc(req)] } }));
    r.on('GET', '/v3', (req) => json(200, { version: this.#versionDoc(req) }));
    r.on('POST', '/v3/auth/tokens', async (req) => {
      const token = this.authenticate(await req.json());
      const withCatalog = !req.query.has('nocatalog');
      return json(201, this.tokenBody(token, withCatalog), { 'x-subject-token': token.id });
    });
    r.on('GET', '/v3/auth/tokens', (req) => {
      this.#requireToken(req);
      const subjectId = header(req, 'x-subject-token') ?? '';
      const subject = this.validate(subjectId);
      if (!subject) throw new ApiError(404, `Could not find token: ${subjectId}.`);
      return json(200, this.tokenBody(subject, !req.query.has('nocatalog')), { 'x-subject-token': subject.id });
    });
    r.on('DELETE', '/v3/auth/tokens', (req) => {
      this.#requireToken(req);
      const subjectId = header(req, 'x-subject-token') ?? '';
      const subject = this.validate(subjectId);
      if (!subject) throw new ApiError(404, `Could not find token: ${subjectId}.`);
      subject.revoked = true;
      return empty(204);
    });
    r.on('GET', '/v3/auth/catalog', (req) => {
      const token = this.#requireToken(req);
      return json(200, {
        catalog: token.project ? this.catalog(token.project) : [],
        links: { self: `${req.origin}/identity/v3/auth/catalog`, previous: null, next: null },
      });
    });
    r.on('GET', '/v3/auth/projects', (req) => {
      const token = this.#requireToken(req);
      const mine = this.projects.filter((p) => (this.#assignments.get(token.user.id)?.get(p.id)?.length ?? 0) > 0);
      return json(200, {
        projects: mine.map((p) => this.#projectBody(req, p)),
        links: { self: `${req.origin}/identity/v3/auth/projects`, previous: null, next: null },
      });
    });
    r.on('GET', '/v3/projects', (req) => {
      this.#requireAdmin(req, 'list_projects');
      const name = req.query.get('name');
      const list = this.projects.filter((p) => name === null || p.name === name);
      return json(200, {
        projects: list.map((p) => this.#projectBody(req, p)),
        links: { self: `${req.origin}/identity/v3/projects`, previous: null, next: null },
      });
    });
    r.on('GET', '/v3/projects/:id', (req, { id }) => {
      const token = this.#requireToken(req);
      const project = this.project(id ?? '');
      if (!project) throw new ApiError(404, `Could not find project: ${id}.`);
      if (!this.isAdmin(token) && token.project?.id !== project.id)
        throw new ApiError(403, 'You are not authorized to perform the requested action: identity:get_project.');
      return json(200, { project: this.#projectBody(req, project) });
    });
    r.on('GET', '/v3/users/:id', (req, { id }) => {
      const token = this.#requireToken(req);
      const user = this.users.find((u) => u.id === id);
      if (!user) throw new ApiError(404, `Could not find user: ${id}.`);
      if (!this.isAdmin(token) && token.user.id !== user.id)
        throw new ApiError(403, 'You are not authorized to perform the requested action: identity:get_user.');
      return json(200, {
        user: {
          id: user.id,
          name: user.name,
          domain_id: user.domainId,
          enabled: true,
          default_project_id: user.defaultProjectId,
          password_expires_at: null,
          options: {},
          links: { self: `${req.origin}/identity/v3/users/${user.id}` },
        },
      });
    });
    r.on('GET', '/v3/domains', (req) => {
      this.#requireAdmin(req, 'list_domains');
      return json(200, {
        domains: [
          {
            id: this.domain.id,
            name: this.domain.name,
            description: 'The default domain',
            enabled: true,
            tags: [],
            options: {},
            links: { self: `${req.origin}/identity/v3/domains/default` },
          },
        ],
      });
    });
    r.on('GET', '/v3/roles', (req) => {
      this.#requireAdmin(req, 'list_roles');
      return json(200, {
        roles: this.roles.map((role) => ({
          id: role.id,
          name: role.name,
          domain_id: null,
          description: null,
          options: {},
          links: { self: `${req.origin}/identity/v3/roles/${role.id}` },
        })),
      });
    });
    r.on('GET', '/v3/regions', (req) => {
      this.#requireToken(req);
      return json(200, {
        regions: [
          { id: this.cloud.region, description: '', parent_region_id: null, links: { self: `${req.origin}/identity/v3/regions/${this.cloud.region}` } },
        ],
      });
    });
    r.on('GET', '/v3/services', (req) => {
      this.#requireAdmin(req, 'list_services');
      return json(200, {
        services: this.catalogServices.map((s) => ({
          id: s.id,
          type: s.type,
          name: s.name,
          enabled: true,
          description: '',
          links: { self: `${req.origin}/identity/v3/services/${s.id}` },
        })),
      });
    });
    r.on('GET', '/v3/endpoints', (req) => {
      this.#requireAdmin(req, 'list_endpoints');
      const endpoints = this.catalogServices.flatMap((s) =>
        ['public', 'internal', 'admin'].map((iface) => ({
          id: this.#endpointIds.get(`${s.id}/${iface}`),
          interface: iface,
          region: this.cloud.region,
          region_id: this.cloud.region,
          service_id: s.id,
          url: this.cloud.publicBase + s.path.replace('{project_id}', '$(project_id)s'),
          enabled: true,
        })),
      );
      return json(200, { endpoints });
    });
  }

  #projectBody(req: SimRequest, p: Project): Record<string, unknown> {
    return {
      id: p.id,
      name: p.name,
      domain_id: p.domainId,
      description: p.description,
      enabled: true,
      is_domain: false,
      parent_id: p.domainId,
      tags: [],
      options: {},
      links: { self: `${req.origin}/identity/v3/projects/${p.id}` },
    };
  }
}

function fernetLike(): string {
  return `gAAAAAB${randomBytes(138).toString('base64url')}`;
}

export function header(req: SimRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
