// The NFVO client: which setting names the NFVO, how often and how long it tries again (5xx, 429,
// a lost connection; Retry-After within bounds), and that its OAuth 2.0 token goes to the NFVO's
// own origin only and is renewed once when the NFVO answers 401.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { NFVO_MAX_ATTEMPTS, NfvoClient, nfvoSettings, retryAfterMs } from '#lib/nfvo/client.ts';
import { makeIdentity } from '../../support/pki.ts';
import { LOCALHOST_CERT, LOCALHOST_KEY } from '../../support/tls.ts';

interface Seen {
  method: string;
  path: string;
  authorization?: string;
}

/** A server answering each request with the next of `answers` (the last one repeats). */
async function serve(answers: Array<{ status: number; headers?: Record<string, string>; body?: string }>) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      if (path === '/token') {
        const n = seen.filter((s) => s.path === '/token').length + 1;
        seen.push({ method: req.method ?? '', path, authorization: req.headers.authorization });
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ access_token: `t${n}`, expires_in: 3600 }));
        return;
      }
      seen.push({ method: req.method ?? '', path, authorization: req.headers.authorization });
      const calls = seen.filter((s) => s.path !== '/token').length;
      const answer = answers[Math.min(calls, answers.length) - 1] ?? { status: 500 };
      res.writeHead(answer.status, answer.headers).end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const noSecrets = { read: async () => ({}) };
// The test servers are on loopback, which a Location on another origin may reach only when the deployment allows it.
process.env.EGRESS_ALLOW_PRIVATE_NETWORKS = 'true';

describe('nfvoSettings', () => {
  it('takes NFVO_ENDPOINT before GRANT_ENDPOINT, the grant one alone, and none without either', () => {
    assert.equal(nfvoSettings({ NFVO_ENDPOINT: 'https://nfvo/', GRANT_ENDPOINT: 'https://old' })?.endpoint, 'https://nfvo');
    assert.equal(nfvoSettings({ NFVO_ENDPOINT: '', GRANT_ENDPOINT: 'https://old/' })?.endpoint, 'https://old');
    assert.equal(nfvoSettings({ NFVO_ENDPOINT: '', GRANT_ENDPOINT: '' }), undefined);
    assert.equal(nfvoSettings({ NFVO_ENDPOINT: 'https://nfvo', SECRETS_PREFIX: 'vnfm/dev/' })?.secretId, 'vnfm/dev/nfvo/credentials');
  });
});

describe('retryAfterMs', () => {
  it('reads delta-seconds and HTTP-dates, and nothing else', () => {
    assert.equal(retryAfterMs('3'), 3000);
    assert.equal(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6000);
    assert.equal(retryAfterMs('soon'), undefined);
    assert.equal(retryAfterMs(undefined), undefined);
  });
});

describe('NfvoClient.call', () => {
  it('tries a 503 again as its Retry-After says, at most three times in all', async () => {
    const nfvo = await serve([{ status: 503, headers: { 'Retry-After': '2' } }]);
    const waits: number[] = [];
    const client = new NfvoClient({ secrets: noSecrets, settings: { endpoint: nfvo.url, secretId: 'x' }, sleep: async (ms) => void waits.push(ms) });
    const response = await client.call('grant/v1/grants', { method: 'POST', version: '1.5.0', body: {} });
    await nfvo.close();
    assert.equal(response.status, 503);
    assert.equal(nfvo.seen.length, NFVO_MAX_ATTEMPTS);
    assert.deepEqual(waits, [2000, 2000]);
  });

  it('does not wait longer than 30 s in all: an answer asking for more is the answer', async () => {
    const nfvo = await serve([{ status: 429, headers: { 'Retry-After': '20' } }]);
    const waits: number[] = [];
    const client = new NfvoClient({ secrets: noSecrets, settings: { endpoint: nfvo.url, secretId: 'x' }, sleep: async (ms) => void waits.push(ms) });
    const response = await client.call('grant/v1/grants', { method: 'POST', version: '1.5.0', body: {} });
    await nfvo.close();
    assert.equal(response.status, 429);
    assert.deepEqual(waits, [20_000]);
    assert.equal(nfvo.seen.length, 2);
  });

  it('returns a 4xx at once, and a 201 after a 500', async () => {
    const refusing = await serve([{ status: 403, body: '{"status":403,"detail":"no"}' }]);
    const client = new NfvoClient({ secrets: noSecrets, settings: { endpoint: refusing.url, secretId: 'x' }, sleep: async () => undefined });
    assert.equal((await client.call('grant/v1/grants', { method: 'POST', version: '1.5.0', body: {} })).status, 403);
    await refusing.close();
    assert.equal(refusing.seen.length, 1);
    const flaky = await serve([{ status: 500 }, { status: 201, body: '{}' }]);
    const again = new NfvoClient({ secrets: noSecrets, settings: { endpoint: flaky.url, secretId: 'x' }, sleep: async () => undefined });
    assert.equal((await again.call('grant/v1/grants', { method: 'POST', version: '1.5.0', body: {} })).status, 201);
    await flaky.close();
  });

  it('sends a bearer token to the NFVO, renews it once on 401, and sends no credentials to another origin', async () => {
    const nfvo = await serve([{ status: 401 }, { status: 200, body: '{}' }, { status: 200, body: '{}' }]);
    const elsewhere = await serve([{ status: 200, body: '{}' }]);
    const secrets = { read: async (id: string) => (id === 'vnfm/dev/nfvo/credentials' ? { clientSecret: 'pw' } : {}) };
    const client = new NfvoClient({
      secrets,
      settings: { endpoint: nfvo.url, tokenUrl: `${nfvo.url}/token`, clientId: 'vnfm-unit', secretId: 'vnfm/dev/nfvo/credentials' },
      sleep: async () => undefined,
    });
    assert.equal((await client.call('grant/v1/grants/g1', { method: 'GET', version: '1.5.0' })).status, 200);
    assert.equal((await client.call(`${elsewhere.url}/grant/v1/grants/g1`, { method: 'GET', version: '1.5.0' })).status, 200);
    await nfvo.close();
    await elsewhere.close();
    const tokenCalls = nfvo.seen.filter((s) => s.path === '/token');
    assert.equal(tokenCalls.length, 2);
    assert.equal(tokenCalls[0]?.authorization, `Basic ${Buffer.from('vnfm-unit:pw').toString('base64')}`);
    assert.deepEqual(
      nfvo.seen.filter((s) => s.path !== '/token').map((s) => s.authorization),
      ['Bearer t1', 'Bearer t2'],
    );
    assert.equal(elsewhere.seen[0]?.authorization, undefined);
  });

  it('presents the client certificate of its secret to an NFVO asking for mutual TLS, trusting the NFVO by the CA the secret names', async () => {
    const clientCa = makeIdentity('nfvo client CA');
    const vnfmIdentity = makeIdentity('vnfm', { issuer: clientCa });
    const subjects: string[] = [];
    const server = https.createServer(
      { key: LOCALHOST_KEY, cert: LOCALHOST_CERT, ca: clientCa.pem, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        subjects.push(String((req.socket as TLSSocket).getPeerCertificate().subject?.CN));
        res.writeHead(201, { 'Content-Type': 'application/json' }).end('{}');
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const endpoint = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const secret = {
      certificate: vnfmIdentity.pem,
      privateKey: vnfmIdentity.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      caCertificate: LOCALHOST_CERT,
    };
    const withCertificate = new NfvoClient({ secrets: { read: async () => secret }, settings: { endpoint, secretId: 'x' }, sleep: async () => undefined });
    const without = new NfvoClient({
      secrets: { read: async () => ({ caCertificate: LOCALHOST_CERT }) },
      settings: { endpoint, secretId: 'x' },
      sleep: async () => undefined,
    });
    try {
      assert.equal((await withCertificate.call('grant/v1/grants', { method: 'POST', version: '1.5.0', body: {} })).status, 201);
      await assert.rejects(without.call('grant/v1/grants', { method: 'POST', version: '1.5.0', body: {} }));
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    assert.deepEqual(subjects, ['vnfm']);
  });
});
