// The Kubernetes object client against a fake API server: the REST calls it makes (discovery, then
// the object's path; "default" for a namespaced object without a namespace; merge patch; list
// selectors; delete options), what it makes of 404s, and TLS that trusts only the VIM's CA.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { KubeClient, KubernetesError } from '#lib/vim/kubernetes/client.ts';
import type { VimConnection } from '#lib/vim/driver.ts';
import { LOCALHOST_CERT, LOCALHOST_KEY } from '../../support/tls.ts';

const TOKEN = 'fake-token';
const CORE = {
  kind: 'APIResourceList',
  groupVersion: 'v1',
  resources: [
    { name: 'namespaces', namespaced: false, kind: 'Namespace' },
    { name: 'configmaps', namespaced: true, kind: 'ConfigMap' },
  ],
};

interface Seen {
  method: string;
  url: string;
  contentType?: string;
  authorization?: string;
  body?: unknown;
}

/** An API server that serves core/v1 only, keeps ConfigMaps, and records every request. */
class FakeApi {
  server!: Server;
  url = '';
  seen: Seen[] = [];
  maps = new Map<string, Record<string, unknown>>();

  constructor(private readonly tls?: { key: string; cert: string }) {}

  async start(): Promise<void> {
    const handler = (request: IncomingMessage, response: ServerResponse) => void this.handle(request, response);
    this.server = this.tls ? createHttpsServer(this.tls, handler) : createHttpServer(handler);
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `${this.tls ? 'https://localhost' : 'http://127.0.0.1'}:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const seen: Seen = { method: request.method ?? '', url: request.url ?? '', authorization: request.headers.authorization };
    if (request.headers['content-type']) seen.contentType = request.headers['content-type'];
    if (text) seen.body = JSON.parse(text);
    this.seen.push(seen);
    const answer = (status: number, body: unknown): void => {
      response.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    };
    const notFound = () =>
      answer(404, { kind: 'Status', status: 'Failure', message: `the server could not find the requested resource (${seen.url})`, code: 404 });
    if (request.headers.authorization !== `Bearer ${TOKEN}`) return answer(401, { kind: 'Status', message: 'Unauthorized', code: 401 });
    const url = new URL(seen.url, 'http://x');
    if (url.pathname === '/api/') return answer(200, { kind: 'APIVersions', versions: ['v1'] });
    if (url.pathname === '/api/v1') return answer(200, CORE);
    const one = /^\/api\/v1\/namespaces\/([^/]+)\/configmaps\/([^/]+)$/.exec(url.pathname);
    if (one) {
      const key = `${one[1]}/${one[2]}`;
      const found = this.maps.get(key);
      if (!found) return notFound();
      if (seen.method === 'DELETE') {
        this.maps.delete(key);
        return answer(200, { kind: 'Status', status: 'Success' });
      }
      if (seen.method === 'PATCH') Object.assign(found.data as object, (seen.body as { data?: object }).data);
      return answer(200, found);
    }
    const collection = /^\/api\/v1\/namespaces\/([^/]+)\/configmaps$/.exec(url.pathname);
    if (collection && seen.method === 'POST') {
      const object = { ...(seen.body as Record<string, unknown>) };
      object.metadata = { ...(object.metadata as object), creationTimestamp: '2026-12-01T10:00:00Z' };
      this.maps.set(`${collection[1]}/${(object.metadata as { name: string }).name}`, object);
      return answer(201, object);
    }
    if (url.pathname === '/api/v1/configmaps' || collection) return answer(200, { kind: 'ConfigMapList', apiVersion: 'v1', items: [...this.maps.values()] });
    return notFound();
  }
}

const vimAt = (endpoint: string, interfaceInfo: Record<string, unknown> = {}): VimConnection => ({
  vimId: 'vim-k8s',
  vimType: 'ETSINFV.KUBERNETES.V_1',
  interfaceInfo: { endpoint, ...interfaceInfo },
  accessInfo: { bearer_token: TOKEN },
});

describe('Kubernetes object client', () => {
  const api = new FakeApi();
  before(() => api.start());
  after(() => api.stop());

  it('creates a namespaced object without a namespace in "default", through discovery, with the bearer token', async () => {
    api.seen = [];
    const client = new KubeClient(vimAt(api.url));
    const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: '1' } };
    const created = await client.create(object);
    assert.deepEqual(
      api.seen.map((request) => `${request.method} ${request.url}`),
      ['GET /api/v1', 'POST /api/v1/namespaces/default/configmaps'],
    );
    assert.ok(api.seen.every((request) => request.authorization === `Bearer ${TOKEN}`));
    assert.equal(api.seen[1]?.contentType, 'application/json');
    assert.deepEqual((api.seen[1]?.body as { metadata?: unknown } | undefined)?.metadata, { name: 'settings', namespace: 'default' });
    assert.equal(object.metadata.name, 'settings');
    assert.equal((object.metadata as { namespace?: string }).namespace, 'default', 'the spec says where it went, as kubectl does');
    assert.equal(created.metadata?.creationTimestamp, '2026-12-01T10:00:00.000Z', 'timestamps in one RFC 3339 form, with milliseconds');
  });

  it('reads, merge-patches, lists with selectors and deletes by path; discovery is asked once per apiVersion', async () => {
    api.seen = [];
    const client = new KubeClient(vimAt(`${api.url}/`));
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'settings' };
    assert.equal((await client.read(ref))?.metadata?.name, 'settings');
    const patched = await client.mergePatch(ref, { data: { b: '2' } });
    assert.deepEqual(patched.data, { a: '1', b: '2' });
    const listed = await client.list('v1', 'ConfigMap', undefined, { labelSelector: 'app=x', fieldSelector: 'metadata.name=settings' });
    assert.deepEqual(
      listed.map((item) => [item.apiVersion, item.kind, item.metadata?.name]),
      [['v1', 'ConfigMap', 'settings']],
    );
    assert.equal(await client.delete(ref, { propagationPolicy: 'Foreground', gracePeriodSeconds: 0 }), true);
    assert.equal(await client.delete(ref), false, 'already gone');
    assert.equal(await client.read(ref), undefined, 'a 404 of the object is its absence');
    assert.deepEqual(
      api.seen.map((request) => `${request.method} ${request.url}`),
      [
        'GET /api/v1',
        'GET /api/v1/namespaces/default/configmaps/settings',
        'PATCH /api/v1/namespaces/default/configmaps/settings',
        'GET /api/v1/configmaps?fieldSelector=metadata.name%3Dsettings&labelSelector=app%3Dx',
        'DELETE /api/v1/namespaces/default/configmaps/settings?gracePeriodSeconds=0&propagationPolicy=Foreground',
        'DELETE /api/v1/namespaces/default/configmaps/settings',
        'GET /api/v1/namespaces/default/configmaps/settings',
      ],
    );
    assert.equal(api.seen[2]?.contentType, 'application/merge-patch+json');
    assert.deepEqual(api.seen[2]?.body, { data: { b: '2' }, apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' } });
  });

  it('tells a kind the cluster does not serve from an object that is not there', async () => {
    const client = new KubeClient(vimAt(api.url));
    assert.equal(await client.listIfServed('apps/v1', 'Deployment', 'default'), undefined, 'no apps/v1 at all (discovery 404)');
    assert.equal(await client.listIfServed('v1', 'Secret', 'default'), undefined, 'v1 served, but no Secret kind');
    await assert.rejects(client.read({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' }), (error: unknown) => {
      assert.ok(error instanceof KubernetesError);
      assert.equal(error.vimStatus, 404);
      assert.match(error.message, /^reading Deployment default\/web: 404 the server could not find the requested resource \(\/apis\/apps\/v1\)$/);
      return true;
    });
    await assert.rejects(
      client.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }),
      /creating Secret s: Unrecognized API version and kind: v1 Secret$/,
    );
    await assert.rejects(client.list('v1', 'Secret', 'default'), (error: unknown) => error instanceof KubernetesError && error.vimStatus === 404);
  });
});

describe('Kubernetes object client on a cluster behind a private CA', () => {
  const api = new FakeApi({ key: LOCALHOST_KEY, cert: LOCALHOST_CERT });
  before(() => api.start());
  after(() => api.stop());

  it('trusts interfaceInfo.ssl_ca_cert (PEM or base64 PEM), and nothing else', async () => {
    await new KubeClient(vimAt(api.url, { ssl_ca_cert: LOCALHOST_CERT })).verify();
    await new KubeClient(vimAt(api.url, { ssl_ca_cert: Buffer.from(LOCALHOST_CERT).toString('base64') })).verify();
    await assert.rejects(new KubeClient(vimAt(api.url)).verify(), (error: unknown) => {
      assert.ok(error instanceof KubernetesError);
      assert.equal(error.vimStatus, undefined);
      assert.match(error.message, /^cannot reach the Kubernetes API at https:\/\/localhost:\d+: self[- ]signed certificate/);
      return true;
    });
  });
});
