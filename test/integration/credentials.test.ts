// Client credentials that stop at once, over HTTP against the local runtime: after
// `npm run clients -- rotate` or `delete`, the client's old tokens and old Basic secret are
// refused within the client-state window (AUTH_CLIENT_STATE_TTL_SECONDS), the new secret works,
// and repeated failed authentications get 429 with Retry-After at the token endpoint and on the API.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { decodeJwt } from 'jose';
import { createLocalClient } from '../../local/oauth2.ts';
import { accessToken, adminCredentials, client, ROOT, startVnfm, type ClientCredentials, type LocalVnfm, type Reply } from '../support/runtime.ts';
import { waitFor } from '../support/wait.ts';

const run = promisify(execFile);
const PATH = '/vnflcm/v2/vnf_instances';

let vnfm: LocalVnfm;
before(async () => {
  vnfm = await startVnfm();
});
after(() => vnfm?.stop());

function newClient(): ClientCredentials {
  return { ...createLocalClient(vnfm.dataDir, { tenantId: 'tenant-c', scopes: ['vnflcm:read'] }), tokenUrl: adminCredentials(vnfm).tokenUrl };
}

/** `npm run clients -- <args>` against this VNFM's data folder, with `env` added; its standard output. */
async function clientsCommandWith(env: Record<string, string>, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/clients.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, VNFM_DATA_DIR: vnfm.dataDir, ...env },
  });
  return stdout;
}
const clientsCommand = (...args: string[]): Promise<string> => clientsCommandWith({}, ...args);

/** The environment `npm run clients` works on a clients table with, as on AWS: this VNFM's table and stand-in. */
function clientsTableEnv(): Record<string, string> {
  return {
    CLIENTS_TABLE: 'ClientsTable',
    AWS_ENDPOINT_URL_DYNAMODB: vnfm.endpoints.dynamodb,
    AWS_REGION: vnfm.endpoints.region,
    AWS_ACCESS_KEY_ID: vnfm.awsCredentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: vnfm.awsCredentials.secretAccessKey,
  };
}

const basicOf = (c: { clientId: string; clientSecret: string }): string => `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString('base64')}`;
const withBasic = (c: ClientCredentials): Promise<Reply> => client(vnfm)('GET', PATH, { token: null, headers: { Authorization: basicOf(c) } });
const withToken = (token: string): Promise<Reply> => client(vnfm)('GET', PATH, { token });

function tokenRequest(c: { clientId: string; clientSecret: string }): Promise<Response> {
  return fetch(adminCredentials(vnfm).tokenUrl, {
    method: 'POST',
    headers: { Authorization: basicOf(c), 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
}

describe('rotation and deletion take effect at once', () => {
  it("refuses a rotated client's old token and old Basic secret, and takes the new secret", async () => {
    const old = newClient();
    const oldToken = await accessToken(old);
    assert.equal((await withToken(oldToken)).status, 200);
    assert.equal((await withBasic(old)).status, 200); // its token is now cached by the API

    const rotated = JSON.parse(await clientsCommand('rotate', old.clientId)) as { clientId: string; clientSecret: string };
    const renewed = { ...old, clientSecret: rotated.clientSecret };
    // The new secret works straight away, Basic and token alike, while the old ones are still in their window.
    assert.equal((await withBasic(renewed)).status, 200);
    const newToken = await accessToken(renewed);
    assert.notEqual(newToken, oldToken);

    await waitFor('the old token to be refused', async () => (await withToken(oldToken)).status === 401);
    const refused = await withToken(oldToken);
    assert.match((refused.body as { detail: string }).detail, /rotated/);
    assert.equal((await withBasic(old)).status, 401);
    assert.equal((await tokenRequest(old)).status, 401);
    assert.equal((await withToken(newToken)).status, 200);
    assert.equal((await withBasic(renewed)).status, 200);
  });

  it('refuses tokens issued before a rotation recorded as on AWS (clients rotated, straight into the clients table)', async () => {
    const target = newClient();
    const token = await accessToken(target);
    assert.equal((await withToken(token)).status, 200);
    const aws = clientsTableEnv();
    assert.match(await clientsCommandWith(aws, 'rotated', target.clientId), /Recorded in ClientsTable/);
    await waitFor('the token to be refused', async () => (await withToken(token)).status === 401);
  });

  it('creates, rotates and deletes a client in the clients table itself, as on AWS (CLIENTS_TABLE set)', async () => {
    const aws = clientsTableEnv();
    const created = JSON.parse(await clientsCommandWith(aws, 'create', '--tenant', 'tenant-t', '--scopes', 'vnflcm:read')) as {
      clientId: string;
      clientSecret: string;
    };
    const tokenUrl = adminCredentials(vnfm).tokenUrl;
    const token = await accessToken({ ...created, tokenUrl });
    assert.equal((await withToken(token)).status, 200);
    assert.equal((await withBasic({ ...created, tokenUrl })).status, 200);
    assert.match(await clientsCommandWith(aws, 'list'), new RegExp(`^${created.clientId}\ttenant-t\tvnflcm:read`, 'm'));

    const rotated = JSON.parse(await clientsCommandWith(aws, 'rotate', created.clientId)) as { clientSecret: string };
    assert.equal((await tokenRequest(created)).status, 401);
    const renewed = { ...created, clientSecret: rotated.clientSecret, tokenUrl };
    assert.equal((await withToken(await accessToken(renewed))).status, 200);
    await waitFor('the old token to be refused', async () => (await withToken(token)).status === 401);

    await clientsCommandWith(aws, 'delete', created.clientId);
    assert.equal((await tokenRequest(renewed)).status, 401);
    await waitFor("the deleted client's Basic credentials to be refused", async () => (await withBasic(renewed)).status === 401);
  });

  it("refuses a deleted client's tokens and Basic credentials", async () => {
    const gone = newClient();
    const token = await accessToken(gone);
    assert.equal((await withToken(token)).status, 200);
    assert.equal((await withBasic(gone)).status, 200);

    await clientsCommand('delete', gone.clientId);
    await waitFor("the deleted client's token to be refused", async () => (await withToken(token)).status === 401);
    assert.match(((await withToken(token)).body as { detail: string }).detail, /deleted/);
    assert.equal((await withBasic(gone)).status, 401);
    assert.equal((await tokenRequest(gone)).status, 401);
  });

  it("does not revive a deleted client's tokens when a client of the same id is created again", async () => {
    const first = {
      ...createLocalClient(vnfm.dataDir, { tenantId: 'tenant-c', scopes: ['vnflcm:read'], clientId: 'reused-id' }),
      tokenUrl: adminCredentials(vnfm).tokenUrl,
    };
    const firstToken = await accessToken(first);
    // Token times have a second's resolution: the id is re-created in a later second than its old
    // token's (an operator re-creating an id within the same second is the known limit).
    const issuedAt = decodeJwt(firstToken).iat ?? 0;
    await waitFor("a second after the old token's", async () => Math.floor(Date.now() / 1000) > issuedAt);
    await clientsCommand('delete', first.clientId);
    await waitFor("the deleted client's token to be refused", async () => (await withToken(firstToken)).status === 401);
    const second = JSON.parse(await clientsCommand('create', '--tenant', 'tenant-c', '--scopes', 'vnflcm:read', '--id', 'reused-id')) as {
      clientId: string;
      clientSecret: string;
    };
    const secondToken = await accessToken({ ...second, tokenUrl: first.tokenUrl });
    await waitFor("the new client's token to be accepted", async () => (await withToken(secondToken)).status === 200);
    assert.equal((await withToken(firstToken)).status, 401);
  });
});

// Last: these failures count against the test's own address as well.
describe('failed authentications are limited', () => {
  it('answers 429 with Retry-After at the token endpoint after 10 wrong secrets for a client id, even to the right secret', async () => {
    const target = newClient();
    for (let i = 0; i < 10; i += 1) assert.equal((await tokenRequest({ ...target, clientSecret: `wrong-${i}` })).status, 401);
    const limited = await tokenRequest({ ...target, clientSecret: 'wrong-again' });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.equal(((await limited.json()) as { error: string }).error, 'slow_down');
    assert.equal((await tokenRequest(target)).status, 429);
  });

  it('answers 429 ProblemDetails with Retry-After for Basic on the API after 10 wrong secrets', async () => {
    const target = newClient();
    for (let i = 0; i < 10; i += 1) assert.equal((await withBasic({ ...target, clientSecret: `wrong-${i}` })).status, 401);
    const limited = await withBasic({ ...target, clientSecret: 'wrong-again' });
    assert.equal(limited.status, 429, limited.text);
    assert.equal(limited.headers.get('content-type'), 'application/problem+json');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    // Another client from the same address is not locked out by one client's failures.
    assert.equal((await withBasic(newClient())).status, 200);
  });
});
