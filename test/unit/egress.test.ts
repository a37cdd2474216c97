// The egress policy: cloud metadata, link-local and reserved addresses are always refused, in
// every spelling; loopback and private ranges only when the deployment forbids them; host names
// are resolved and every address checked, also when the HTTP client connects.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertEgressAllowed, deniedReason, EgressDeniedError, egressRequest, guardedLookup, parseEgressUrl } from '#lib/egress.ts';

const STRICT = { allowPrivateNetworks: false };
const LOCAL = { allowPrivateNetworks: true };

describe('deniedReason', () => {
  it('always refuses metadata, link-local, multicast, reserved and unspecified addresses, however spelt', () => {
    for (const address of [
      '169.254.169.254',
      '169.254.0.1',
      'fd00:ec2::254',
      '100.100.100.200',
      '0.0.0.0',
      '0.1.2.3',
      '224.0.0.1',
      '255.255.255.255',
      'fe80::1',
      'FE80::abcd',
      'ff02::1',
      '::',
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      '64:ff9b::169.254.169.254',
      '[fe80::1]',
    ]) {
      assert.match(deniedReason(address, LOCAL) ?? '', /never allowed/, address);
      assert.match(deniedReason(address, STRICT) ?? '', /never allowed/, address);
    }
  });

  it('refuses loopback and private addresses only when private networks are not allowed', () => {
    for (const [address, kind] of [
      ['127.0.0.1', 'loopback'],
      ['127.8.9.10', 'loopback'],
      ['::1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['100.64.0.1', 'private'],
      ['fd12:3456::1', 'private'],
      ['::ffff:10.0.0.1', 'private'],
    ] as const) {
      assert.match(deniedReason(address, STRICT) ?? '', new RegExp(`${kind} address`), address);
      assert.equal(deniedReason(address, LOCAL), undefined, address);
    }
  });

  it('allows public addresses', () => {
    for (const address of ['8.8.8.8', '172.32.0.1', '192.0.2.10', '2001:db8::1', '::ffff:8.8.8.8']) {
      assert.equal(deniedReason(address, STRICT), undefined, address);
    }
  });
});

describe('URLs', () => {
  it('takes only http(s) URLs without credentials', () => {
    assert.equal(parseEgressUrl('https://nfvo.example.com/cb').hostname, 'nfvo.example.com');
    for (const bad of ['nfvo.example.com/cb', 'file:///etc/passwd', 'gopher://x', 'https://user:pw@nfvo.example.com/cb']) {
      assert.throws(() => parseEgressUrl(bad), EgressDeniedError, bad);
    }
  });

  it('checks the addresses a host name resolves to, and IP literals in any notation', async () => {
    await assert.rejects(assertEgressAllowed('http://localhost:8080/cb', STRICT), /loopback address/);
    await assertEgressAllowed('http://localhost:8080/cb', LOCAL);
    await assert.rejects(assertEgressAllowed('http://0xa9.254.169.254/latest', LOCAL), /169\.254\.169\.254.*never allowed/);
    await assert.rejects(assertEgressAllowed('http://2852039166/', LOCAL), /never allowed/);
    await assert.rejects(assertEgressAllowed('http://[::ffff:a9fe:a9fe]/', LOCAL), /never allowed/);
    await assert.rejects(
      assertEgressAllowed('http://no-such-host.invalid/', LOCAL),
      (error: Error) => !(error instanceof EgressDeniedError) && /cannot resolve/.test(error.message),
    );
  });
});

describe('egressRequest', () => {
  it('talks to an allowed server, does not follow redirects, and refuses a denied one before connecting', async () => {
    const server = http.createServer((req, res) => {
      if (req.url === '/redirect') res.writeHead(302, { Location: 'http://169.254.169.254/' }).end();
      else res.writeHead(204, { 'X-Seen-Method': req.method ?? '' }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://localhost:${(server.address() as AddressInfo).port}`;
    try {
      const ok = await egressRequest(`${url}/cb`, { method: 'POST', body: '{}', timeoutMs: 5000 }, LOCAL);
      assert.equal(ok.status, 204);
      assert.equal(ok.headers['x-seen-method'], 'POST');
      assert.equal((await egressRequest(`${url}/redirect`, { method: 'GET', timeoutMs: 5000 }, LOCAL)).status, 302);
      await assert.rejects(egressRequest(`${url}/cb`, { method: 'GET', timeoutMs: 5000 }, STRICT), EgressDeniedError);
    } finally {
      server.close();
    }
  });

  it('checks again at connection time, whatever the name resolves to then', async () => {
    const lookup = (policy: typeof STRICT) =>
      new Promise<unknown>((resolve, reject) => {
        (guardedLookup(policy) as unknown as (host: string, options: object, callback: (error: Error | null, address: unknown) => void) => void)(
          'localhost',
          {},
          (error, address) => (error ? reject(error) : resolve(address)),
        );
      });
    await assert.rejects(lookup(STRICT), EgressDeniedError);
    assert.match(String(await lookup(LOCAL)), /^(127\.0\.0\.1|::1)$/);
  });

  it('keeps 64 KiB of an answer unless told more, and says when it kept only the beginning', async () => {
    const server = http.createServer((_req, res) => res.writeHead(200).end('x'.repeat(100 * 1024)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const cut = await egressRequest(url, { method: 'GET', timeoutMs: 5000 }, LOCAL);
      assert.equal(cut.truncated, true);
      assert.ok(cut.body.length <= 64 * 1024);
      const whole = await egressRequest(url, { method: 'GET', timeoutMs: 5000, maxResponseBytes: 1024 * 1024 }, LOCAL);
      assert.equal(whole.truncated, undefined);
      assert.equal(whole.body.length, 100 * 1024);
    } finally {
      server.close();
    }
  });

  it('gives up on a server that does not answer in time', async () => {
    const server = http.createServer(() => {
      /* never answers */
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await assert.rejects(egressRequest(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'GET', timeoutMs: 200 }, LOCAL), /200 ms/);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
