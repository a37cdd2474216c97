// The OpenStack driver's clients against a small in-test fake of Keystone, Glance and Heat: token
// scoping, caching and the one re-authentication after a 401, catalog interface and region, errors
// as VimError, Heat's by-name redirect, a private CA, and driver paths the simulator does not reach
// easily (images already in Glance or granted, images still saving, clean-up of a failed start).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { CsarArchive } from '#lib/packages/archive.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import { driverFor } from '#lib/vim/registry.ts';
import type { OperationContext, PackageFiles, VimConnection } from '#lib/vim/driver.ts';
import { openStackDriver } from '#lib/vim/openstack/driver.ts';
import { GlanceClient } from '#lib/vim/openstack/glance.ts';
import { HeatClient } from '#lib/vim/openstack/heat.ts';
import { VimError, clearTokenCache } from '#lib/vim/openstack/index.ts';
import { OpenStackSession } from '#lib/vim/openstack/keystone.ts';
import { openSamplePackage } from '../../support/sample-package.ts';
import { LOCALHOST_CERT, LOCALHOST_KEY } from '../../support/tls.ts';

// ---------------------------------------------------------------------------------------------
// The fake

interface FakeImage {
  id: string;
  name: string;
  status: string;
  disk_format: string;
  container_format: string;
  size: number | null;
  min_disk: number;
  min_ram: number;
}
interface FakeStack {
  id: string;
  stack_name: string;
  stack_status: string;
  stack_status_reason: string;
  template: unknown;
  files: unknown;
  parameters: Record<string, unknown>;
  gets: number;
}

const USER = { username: 'nfv_user', password: 'devstack', project: 'nfv', projectId: 'project-1' };
const UNAUTHORIZED = { error: { code: 401, message: 'The request you have made requires authentication.', title: 'Unauthorized' } };

class Fake {
  server!: Server;
  base = '';
  requests: string[] = [];
  logins = 0;
  tokens = new Set<string>();
  /** Issue tokens that are already past expires_at (the client must not reuse them). */
  expiredTokens = false;
  /** Answer every service request with 401, whatever the token. */
  refuseAll = false;
  images = new Map<string, FakeImage>();
  stacks = new Map<string, FakeStack>();
  /** PATCH requests to Heat with their JSON bodies. */
  patches: Array<{ path: string; body: unknown }> = [];
  nextStackFailure?: string;
  /** Refuse stack creation with this Heat message (400). */
  refuseStacks?: string;
  /** Glance answers this many reads of an uploaded image with "saving" (to exercise waiting). */
  savingReads = 0;
  private saving = new Map<string, number>();
  uploads = new Map<string, number>();
  private counter = 0;

  constructor(private readonly tls?: { key: string; cert: string }) {}

  async start(): Promise<void> {
    const handler = (request: IncomingMessage, response: ServerResponse) => {
      this.handle(request, response).catch((error: unknown) => {
        response.writeHead(500).end(String(error));
      });
    };
    this.server = this.tls ? createHttpsServer(this.tls, handler) : createHttpServer(handler);
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.base = `${this.tls ? 'https' : 'http'}://${this.tls ? 'localhost' : '127.0.0.1'}:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }

  get authUrl(): string {
    return `${this.base}/identity/v3`;
  }

  private id(prefix: string): string {
    return `${prefix}-${++this.counter}`;
  }

  private catalog() {
    const endpoint = (url: string, region = 'RegionOne', iface = 'public') => ({ id: this.id('ep'), interface: iface, region, region_id: region, url });
    return [
      { type: 'identity', name: 'keystone', endpoints: [endpoint(`${this.base}/identity`)] },
      {
        type: 'orchestration',
        name: 'heat',
        endpoints: [endpoint(`${this.base}/heat-api/v1/${USER.projectId}`), endpoint(`${this.base}/heat-two/v1/%(tenant_id)s`, 'RegionTwo')],
      },
      { type: 'image', name: 'glance', endpoints: [endpoint(`${this.base}/image`), endpoint(`${this.base}/image-internal`, 'RegionOne', 'internal')] },
    ];
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.base);
    const path = url.pathname;
    this.requests.push(`${request.method} ${path}`);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(body === undefined ? undefined : JSON.stringify(body));
    };
    const readBody = async (): Promise<Buffer> => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    };

    if (path === '/identity/v3/auth/tokens' && request.method === 'POST') {
      this.logins += 1;
      const body = JSON.parse((await readBody()).toString()) as {
        auth: {
          identity: { password: { user: { name: string; password: string; domain: { name: string } } } };
          scope: { project: { name?: string; id?: string; domain?: { name: string } } };
        };
      };
      const user = body.auth.identity.password.user;
      const project = body.auth.scope.project;
      const projectOk = project.id === USER.projectId || (project.name === USER.project && project.domain?.name === 'Default');
      if (user.name !== USER.username || user.password !== USER.password || user.domain.name !== 'Default' || !projectOk) return json(401, UNAUTHORIZED);
      const token = this.id('token');
      this.tokens.add(token);
      const expires = new Date(Date.now() + (this.expiredTokens ? -1000 : 3_600_000)).toISOString();
      return json(
        201,
        { token: { expires_at: expires, project: { id: USER.projectId, name: USER.project }, catalog: this.catalog() } },
        { 'X-Subject-Token': token },
      );
    }

    const token = request.headers['x-auth-token'];
    if (this.refuseAll || typeof token !== 'string' || !this.tokens.has(token)) return json(401, UNAUTHORIZED);

    const glance = /^\/(image|image-internal)\/v2\/images(?:\/([^/]+))?(\/file)?$/.exec(path);
    if (glance) {
      const [, , id, file] = glance;
      if (!id && request.method === 'POST') {
        const body = JSON.parse((await readBody()).toString()) as Partial<FakeImage>;
        const image: FakeImage = {
          id: this.id('image'),
          name: body.name ?? '',
          status: 'queued',
          disk_format: body.disk_format ?? '',
          container_format: body.container_format ?? '',
          size: null,
          min_disk: body.min_disk ?? 0,
          min_ram: body.min_ram ?? 0,
        };
        this.images.set(image.id, image);
        return json(201, image);
      }
      if (!id && request.method === 'GET') {
        const name = url.searchParams.get('name');
        return json(200, { images: [...this.images.values()].filter((image) => name === null || image.name === name) });
      }
      const image = id ? this.images.get(id) : undefined;
      if (!image) {
        response.writeHead(404, { 'Content-Type': 'text/html' }).end(`<html><body><h1>404 Not Found</h1>No image found with ID ${id}</body></html>`);
        return;
      }
      if (file && request.method === 'PUT') {
        const data = await readBody();
        this.uploads.set(image.id, data.length);
        image.size = data.length;
        image.status = this.savingReads ? 'saving' : 'active';
        this.saving.set(image.id, this.savingReads);
        response.writeHead(204).end();
        return;
      }
      if (request.method === 'GET') {
        const left = (this.saving.get(image.id) ?? 0) - 1;
        this.saving.set(image.id, left);
        if (image.status === 'saving' && left < 0) image.status = 'active';
        return json(200, image);
      }
      if (request.method === 'DELETE') {
        this.images.delete(image.id);
        response.writeHead(204).end();
        return;
      }
    }

    const heat = /^\/(heat-api|heat-two)\/v1\/([^/]+)\/stacks(?:\/([^/]+))?(?:\/([^/]+))?(\/resources(?:\/([^/]+))?)?$/.exec(path);
    if (heat) {
      const [, prefix, project, name, id, resources, resourceName] = heat;
      if (project !== USER.projectId) return json(404, { error: { message: `project ${project}` } });
      if (!name && request.method === 'POST' && this.refuseStacks) {
        return json(400, {
          explanation: 'The server could not comply with the request since it is either malformed or otherwise incorrect.',
          code: 400,
          error: { message: this.refuseStacks, type: 'InvalidTemplateVersion' },
          title: 'Bad Request',
        });
      }
      if (!name && request.method === 'POST') {
        const body = JSON.parse((await readBody()).toString()) as {
          stack_name: string;
          template: unknown;
          files: unknown;
          parameters: Record<string, unknown>;
          disable_rollback: boolean;
        };
        if ([...this.stacks.values()].some((stack) => stack.stack_name === body.stack_name && stack.stack_status !== 'DELETE_COMPLETE')) {
          return json(409, { error: { message: `The Stack (${body.stack_name}) already exists.` } });
        }
        const failure = this.nextStackFailure;
        this.nextStackFailure = undefined;
        const stack: FakeStack = {
          id: this.id('stack'),
          stack_name: body.stack_name,
          stack_status: 'CREATE_IN_PROGRESS',
          stack_status_reason: 'Stack CREATE started',
          template: body.template,
          files: body.files,
          parameters: body.parameters,
          gets: 0,
        };
        if (failure) stack.stack_status_reason = failure;
        this.stacks.set(stack.id, stack);
        return json(201, {
          stack: { id: stack.id, links: [{ href: `${this.base}/${prefix}/v1/${project}/stacks/${stack.stack_name}/${stack.id}`, rel: 'self' }] },
        });
      }
      const stack = id
        ? this.stacks.get(id)
        : [...this.stacks.values()].find((candidate) => candidate.stack_name === name && candidate.stack_status !== 'DELETE_COMPLETE');
      if (!stack || stack.stack_name !== name)
        return json(404, {
          explanation: 'The resource could not be found.',
          code: 404,
          error: { message: `The Stack (${name}) could not be found.`, type: 'EntityNotFound' },
          title: 'Not Found',
        });
      if (!id) {
        response.writeHead(302, { Location: `${this.base}/${prefix}/v1/${project}/stacks/${stack.stack_name}/${stack.id}` }).end();
        return;
      }
      if (resources && request.method === 'GET') return json(200, { resources: [] });
      if (request.method === 'PATCH') {
        this.patches.push({ path, body: JSON.parse((await readBody()).toString()) });
        if (resourceName) return json(200, null);
        if (stack.stack_status.endsWith('_IN_PROGRESS'))
          return json(409, {
            explanation: 'There was a conflict when trying to complete your request.',
            code: 409,
            error: { message: `Stack ${stack.stack_name} already has an action (UPDATE) in progress.`, type: 'ActionInProgress' },
            title: 'Conflict',
          });
        stack.stack_status = 'UPDATE_IN_PROGRESS';
        response.writeHead(202).end();
        return;
      }
      if (request.method === 'GET') {
        const answer = {
          id: stack.id,
          stack_name: stack.stack_name,
          stack_status: stack.stack_status,
          stack_status_reason: stack.stack_status_reason,
          parameters: { nfv: JSON.stringify((stack.parameters as { nfv?: unknown }).nfv) },
        };
        // Every read moves an operation on by one step, so polls need no clock.
        if (stack.stack_status === 'CREATE_IN_PROGRESS') {
          stack.stack_status = stack.stack_status_reason === 'Stack CREATE started' ? 'CREATE_COMPLETE' : 'CREATE_FAILED';
          if (stack.stack_status === 'CREATE_COMPLETE') stack.stack_status_reason = 'Stack CREATE completed successfully';
        } else if (stack.stack_status === 'UPDATE_IN_PROGRESS') {
          stack.stack_status = 'UPDATE_COMPLETE';
        } else if (stack.stack_status === 'DELETE_IN_PROGRESS') {
          stack.stack_status = 'DELETE_COMPLETE';
        }
        return json(200, { stack: answer });
      }
      if (request.method === 'DELETE') {
        stack.stack_status = 'DELETE_IN_PROGRESS';
        response.writeHead(204).end();
        return;
      }
    }
    json(404, { error: { message: `no route ${request.method} ${path}` } });
  }
}

function vimOf(fake: Fake, access: Record<string, unknown> = {}, iface: Record<string, unknown> = {}): VimConnection {
  return {
    vimId: 'vim-1',
    vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
    interfaceInfo: { endpoint: fake.authUrl, ...iface },
    accessInfo: { username: USER.username, password: USER.password, project: USER.project, projectDomain: 'Default', userDomain: 'Default', ...access },
  };
}

function vimErrorMatching(pattern: RegExp, fields: Partial<Pick<VimError, 'service' | 'vimStatus'>> = {}) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof VimError, `a VimError, not ${String(error)}`);
    assert.match(error.message, pattern);
    for (const [key, value] of Object.entries(fields)) assert.equal(error[key as keyof VimError], value, key);
    return true;
  };
}

// ---------------------------------------------------------------------------------------------

let fake: Fake;
beforeEach(async () => {
  clearTokenCache();
  fake = new Fake();
  await fake.start();
});
afterEach(async () => {
  await fake.stop();
});

describe('Keystone', () => {
  it('logs in once, scoped to the project, and reuses the token', async () => {
    const session = new OpenStackSession(vimOf(fake));
    const heat = new HeatClient(session);
    assert.equal(await heat.getStack('nothing'), undefined);
    assert.equal(await heat.getStack('nothing'), undefined);
    assert.equal(await new HeatClient(new OpenStackSession(vimOf(fake))).getStack('nothing'), undefined);
    assert.equal(fake.logins, 1);
    assert.deepEqual(
      fake.requests.filter((line) => line.includes('/stacks')),
      Array(3).fill(`GET /heat-api/v1/${USER.projectId}/stacks/nothing`),
    );
  });

  it('scopes by project id too, and takes the auth URL with or without /v3', async () => {
    const vim = vimOf(fake, { project: undefined, projectId: USER.projectId }, { endpoint: `${fake.base}/identity/` });
    await openStackDriver.verify(vim);
    assert.deepEqual(fake.requests, ['POST /identity/v3/auth/tokens']);
  });

  it('authenticates again, once, when a service refuses the token', async () => {
    const heat = new HeatClient(new OpenStackSession(vimOf(fake)));
    await heat.getStack('x');
    fake.tokens.clear(); // the token expired or was revoked on the VIM's side
    assert.equal(await heat.getStack('x'), undefined);
    assert.equal(fake.logins, 2);

    fake.refuseAll = true;
    await assert.rejects(
      heat.getStack('x'),
      vimErrorMatching(/reading stack x: heat answered 401: The request you have made requires authentication\./, { service: 'heat', vimStatus: 401 }),
    );
    assert.equal(fake.logins, 3, 'one new login, no loop');
  });

  it('does not reuse a token that is about to expire', async () => {
    fake.expiredTokens = true;
    const glance = new GlanceClient(new OpenStackSession(vimOf(fake)));
    await glance.findByName('a');
    await glance.findByName('b');
    assert.equal(fake.logins, 2);
  });

  it('says what Keystone said about a wrong password, and which endpoint cannot be reached', async () => {
    await assert.rejects(
      openStackDriver.verify(vimOf(fake, { password: 'wrong' })),
      vimErrorMatching(/authentication of nfv_user at .*\/identity\/v3 failed: keystone answered 401: The request you have made requires authentication\./, {
        service: 'keystone',
        vimStatus: 401,
      }),
    );
    const endpoint = fake.authUrl;
    await fake.stop();
    await assert.rejects(
      openStackDriver.verify(vimOf(fake)),
      vimErrorMatching(new RegExp(`cannot reach ${endpoint.replace(/[.]/g, '\\.')} \\(ECONNREFUSED\\)`), { service: 'keystone' }),
    );
    await fake.start(); // for afterEach
  });

  it('refuses incomplete access info without echoing the password', async () => {
    await assert.rejects(openStackDriver.verify(vimOf(fake, { username: undefined, password: 'topsecret' })), (error: unknown) => {
      assert.ok(error instanceof VimError);
      assert.match(error.message, /accessInfo is incomplete \(username/);
      assert.doesNotMatch(error.message, /topsecret/);
      return true;
    });
    await assert.rejects(openStackDriver.verify(vimOf(fake, { project: undefined })), /needs project \(a name\) or projectId/);
  });

  it('picks endpoints by region and interface', async () => {
    await new HeatClient(new OpenStackSession(vimOf(fake, { region: 'RegionTwo' }))).getStack('x');
    await new GlanceClient(new OpenStackSession(vimOf(fake, {}, { interface: 'internal' }))).findByName('x');
    assert.deepEqual(
      fake.requests.filter((line) => !line.includes('auth')),
      [`GET /heat-two/v1/${USER.projectId}/stacks/x`, 'GET /image-internal/v2/images'],
    );
    await assert.rejects(
      openStackDriver.verify(vimOf(fake, { region: 'RegionThree' })),
      /has no orchestration or image endpoint for interface public in region RegionThree/,
    );
  });

  it('is registered for the SOL003 OpenStack vimType, in any case, and the legacy alias', async () => {
    await import('#lib/vim/openstack/index.ts');
    assert.equal(driverFor('ETSINFV.OPENSTACK_KEYSTONE.V_3'), openStackDriver);
    assert.equal(driverFor('etsinfv.openstack_keystone.v_3'), openStackDriver);
    assert.equal(driverFor('openstack'), openStackDriver);
  });
});

describe('a VIM behind a private CA', () => {
  let secure: Fake;
  before(async () => {
    secure = new Fake({ key: LOCALHOST_KEY, cert: LOCALHOST_CERT });
    await secure.start();
  });
  after(async () => {
    await secure.stop();
  });

  it('trusts interfaceInfo.ssl_ca_cert (or cacert), and nothing else', async () => {
    await openStackDriver.verify(vimOf(secure, {}, { ssl_ca_cert: LOCALHOST_CERT }));
    clearTokenCache();
    await openStackDriver.verify(vimOf(secure, {}, { cacert: LOCALHOST_CERT }));
    await assert.rejects(
      openStackDriver.verify(vimOf(secure)),
      vimErrorMatching(/cannot reach https:\/\/localhost:\d+\/identity\/v3 \(DEPTH_ZERO_SELF_SIGNED_CERT\)/),
    );
  });
});

describe('Heat and Glance clients', () => {
  it('follows the redirect of a stack read by name', async () => {
    const heat = new HeatClient(new OpenStackSession(vimOf(fake)));
    const created = await heat.createStack({
      stackName: 'vnf-a',
      template: 'heat_template_version: 2013-05-23',
      files: {},
      parameters: {},
      disableRollback: true,
    });
    assert.ok(created);
    const stack = await heat.getStack('vnf-a');
    assert.equal(stack?.id, created.id);
    assert.deepEqual(fake.requests.slice(-2), [
      `GET /heat-api/v1/${USER.projectId}/stacks/vnf-a`,
      `GET /heat-api/v1/${USER.projectId}/stacks/vnf-a/${created.id}`,
    ]);
    assert.equal(
      await heat.createStack({ stackName: 'vnf-a', template: '', files: {}, parameters: {}, disableRollback: true }),
      undefined,
      '409: the stack exists',
    );
  });

  it('updates a stack by PATCH naming only what changes, and marks a resource unhealthy', async () => {
    const heat = new HeatClient(new OpenStackSession(vimOf(fake)));
    const created = await heat.createStack({
      stackName: 'vnf-b',
      template: 'heat_template_version: 2013-05-23',
      files: {},
      parameters: {},
      disableRollback: true,
    });
    assert.ok(created);
    assert.equal((await heat.getStack(`vnf-b/${created.id}`))?.stack_status, 'CREATE_IN_PROGRESS', 'the fake completes it on this read');
    await heat.markUnhealthy(`vnf-b/${created.id}`, 'VDU 1', 'healed by VNF LCM operation op-1');
    assert.equal(
      await heat.patchStack(`vnf-b/${created.id}`, { parameters: { nfv: { VDU: { VDU1: { desired_capacity: 2 } } } }, disableRollback: true }),
      true,
    );
    const stacks = `/heat-api/v1/${USER.projectId}/stacks`;
    assert.deepEqual(fake.patches, [
      { path: `${stacks}/vnf-b/${created.id}/resources/VDU%201`, body: { mark_unhealthy: true, resource_status_reason: 'healed by VNF LCM operation op-1' } },
      { path: `${stacks}/vnf-b/${created.id}`, body: { parameters: { nfv: { VDU: { VDU1: { desired_capacity: 2 } } } }, disable_rollback: true } },
    ]);
    // Asked again while the update is in progress (a step resumed after a crash): the update under way is the answer.
    assert.equal(await heat.patchStack(`vnf-b/${created.id}`, { parameters: {}, disableRollback: true }), false);
    assert.equal((await heat.getStack(`vnf-b/${created.id}`))?.stack_status, 'UPDATE_IN_PROGRESS');
  });

  it('streams image data, finds images by name and ignores deleting a missing one', async () => {
    const glance = new GlanceClient(new OpenStackSession(vimOf(fake)));
    const image = await glance.createImage({ name: 'img', diskFormat: 'qcow2', containerFormat: 'bare', minDisk: 1, minRam: 256 });
    await glance.uploadData(image.id, async () => Readable.from([Buffer.alloc(1000, 1), Buffer.alloc(24, 2)]));
    assert.equal(fake.uploads.get(image.id), 1024);
    assert.equal((await glance.getImage(image.id))?.status, 'active');
    assert.deepEqual(
      (await glance.findByName('img')).map((found) => found.id),
      [image.id],
    );
    await glance.deleteImage(image.id);
    await glance.deleteImage(image.id);
    assert.equal(await glance.getImage(image.id), undefined);
  });

  it('uploads again from a fresh stream when the upload needed a new token', async () => {
    const glance = new GlanceClient(new OpenStackSession(vimOf(fake)));
    const image = await glance.createImage({ name: 'img', diskFormat: 'raw', containerFormat: 'bare' });
    fake.tokens.clear();
    let opened = 0;
    await glance.uploadData(image.id, async () => {
      opened += 1;
      return Readable.from([Buffer.alloc(10)]);
    });
    assert.equal(opened, 2);
    assert.equal(fake.uploads.get(image.id), 10);
  });
});

// ---------------------------------------------------------------------------------------------
// Driver paths that depend on what Glance already has

let archive: CsarArchive;
let vnfd: ParsedVnfd;
let files: PackageFiles;
before(async () => {
  ({ archive, vnfd, files } = await openSamplePackage('openstack-vnf-v1'));
});
after(async () => {
  await archive.close();
});

function context(overrides: Partial<OperationContext> = {}): OperationContext {
  // These tests instantiate: the request is the instantiate request.
  const request = overrides.request ?? { flavourId: 'simple', extVirtualLinks: [{ id: 'ext', resourceId: 'net-public', extCps: [{ cpdId: 'VDU1_CP1' }] }] };
  return {
    vnfInstanceId: 'inst-1',
    opOccId: 'op-1',
    vnfd,
    flavourId: 'simple',
    request,
    instantiateRequest: request,
    files,
    vim: vimOf(fake),
    grant: {},
    ...overrides,
  };
}

describe('OpenStack driver on the fake', () => {
  it('uploads an image file the VDU and the volume share once, and creates the stack once it is active', async () => {
    fake.savingReads = 2;
    const state = await openStackDriver.instantiateStart(context());
    const images = state.images as Array<{ id: string; imageId: string; created: boolean }>;
    assert.equal(images.length, 2);
    assert.deepEqual(
      images.map((image) => [image.imageId, image.created]),
      [
        ['VDU1', true],
        ['VirtualStorage', false],
      ],
    );
    assert.equal(images[0]?.id, images[1]?.id);
    const [uploaded] = fake.images.values();
    assert.deepEqual(
      {
        name: uploaded?.name,
        disk: uploaded?.disk_format,
        container: uploaded?.container_format,
        minDisk: uploaded?.min_disk,
        minRam: uploaded?.min_ram,
        size: uploaded?.size,
      },
      { name: 'vnf-inst-1-VDU1', disk: 'raw', container: 'bare', minDisk: 1, minRam: 245, size: 2 ** 20 },
    );
    // Glance is still saving the image: no stack yet.
    assert.equal(state.stackId, undefined);
    const waiting = await openStackDriver.instantiatePoll(context(), state);
    assert.equal(waiting.status, 'IN_PROGRESS');
    assert.equal(waiting.state.stackId, undefined);
    assert.equal(fake.stacks.size, 0);
    const created = await openStackDriver.instantiatePoll(context(), waiting.state);
    assert.equal(created.status, 'IN_PROGRESS');
    assert.ok(created.state.stackId, 'created once the image is active');
    const [stack] = fake.stacks.values();
    assert.equal(stack?.stack_name, 'vnf-inst-1');
    assert.deepEqual(Object.keys(stack?.files as object), ['VDU1.yaml']);
    const nfv = (stack!.parameters as { nfv: { VDU: Record<string, { vcImageId?: string }>; CP: unknown } }).nfv;
    assert.equal(nfv.VDU.VDU1?.vcImageId, uploaded?.id);
    assert.equal(nfv.VDU.VirtualStorage?.vcImageId, uploaded?.id);
    assert.deepEqual(nfv.CP, { VDU1_CP1: { network: 'net-public' } });
    const building = await openStackDriver.instantiatePoll(context(), created.state);
    assert.equal(building.status, 'IN_PROGRESS');
    assert.equal((await openStackDriver.instantiatePoll(context(), building.state)).status, 'DONE');
  });

  it('uses granted images and images Glance already has, and says which one is missing', async () => {
    const noFiles: ParsedVnfd = { ...vnfd, softwareImages: [] };
    await assert.rejects(
      openStackDriver.instantiateStart(context({ vnfd: noFiles })),
      vimErrorMatching(/software image VDU1-image of VDU1 is not granted, not in the VNF package and not an active image in Glance/, { service: 'glance' }),
    );
    const glance = new GlanceClient(new OpenStackSession(vimOf(fake)));
    const existing = await glance.createImage({ name: 'VDU1-image', diskFormat: 'raw', containerFormat: 'bare' });
    await glance.uploadData(existing.id, async () => Readable.from([Buffer.alloc(1)]));
    const state = await openStackDriver.instantiateStart(context({ vnfd: noFiles, grant: { images: { VirtualStorage: 'granted-image' } } }));
    assert.deepEqual(state.images, [
      { id: existing.id, imageId: 'VDU1', created: false },
      { id: 'granted-image', imageId: 'VirtualStorage', created: false },
    ]);
    assert.equal(fake.images.size, 1, 'nothing uploaded');
    await openStackDriver.terminateStart(context({ vnfd: noFiles }), state);
    assert.ok(fake.images.has(existing.id), 'an image the driver did not create stays');
  });

  it("removes what it uploaded when its start step fails, naming Heat's reason", async () => {
    const bad = context({ request: { flavourId: 'simple', extVirtualLinks: 'not a list' } });
    await assert.rejects(openStackDriver.instantiateStart(bad), /extVirtualLinks/);
    assert.equal(fake.requests.length, 0, 'request problems show before anything is uploaded');

    fake.refuseStacks = 'The template version is invalid: heat_template_version: 1999-01-01';
    await assert.rejects(
      openStackDriver.instantiateStart(context()),
      vimErrorMatching(/creating stack vnf-inst-1: heat answered 400: The template version is invalid/, { service: 'heat', vimStatus: 400 }),
    );
    assert.ok(
      fake.requests.some((line) => line.startsWith('PUT /image/v2/images/')),
      'the image was uploaded',
    );
    assert.equal(fake.images.size, 0, 'and deleted again');
  });

  it('rolls back from a lost state by the stack and image names', async () => {
    await openStackDriver.instantiateStart(context());
    assert.equal(fake.images.size, 1);
    const started = await openStackDriver.terminateStart(context(), {});
    assert.equal(started.stackName, 'vnf-inst-1');
    assert.equal(fake.images.size, 1, 'images wait for the stack to be gone');
    const deleting = await openStackDriver.terminatePoll(context(), started);
    assert.equal(deleting.status, 'IN_PROGRESS');
    assert.equal(fake.images.size, 1, 'images wait for the stack to be gone');
    const done = await openStackDriver.terminatePoll(context(), deleting.state);
    assert.equal(done.status, 'DONE');
    assert.equal(fake.images.size, 0);
    assert.deepEqual(
      [...fake.stacks.values()].map((stack) => stack.stack_status),
      ['DELETE_COMPLETE'],
    );
    const again = await openStackDriver.terminateStart(context(), {});
    assert.equal((await openStackDriver.terminatePoll(context(), again)).status, 'DONE', 'nothing left is fine');
  });
});
