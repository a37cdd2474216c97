// A script's network allowance: how the request writes it, and what the relay refuses to connect
// it to even when it is listed (the egress policy's refusals and the VNFM's own endpoints).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { allowancesOf, parseAllowance, productEndpoints, relayRefusal } from '#lib/scripts/network.ts';

describe('additionalParams.scriptNetworkAccess', () => {
  it('lists IP host:port pairs, IPv6 in brackets', () => {
    assert.deepEqual(allowancesOf({ scriptNetworkAccess: ['10.10.0.5:443', '[fd00::5]:8080'] }), [
      { host: '10.10.0.5', port: 443 },
      { host: 'fd00::5', port: 8080 },
    ]);
    assert.deepEqual(allowancesOf({}), []);
    assert.deepEqual(allowancesOf(undefined), []);
  });

  it('refuses names, missing or bad ports, and anything but a list of strings', () => {
    assert.throws(() => parseAllowance('lb.example.com:443'), /names a host by name; give its IP address/);
    assert.throws(() => parseAllowance('10.0.0.1'), /is not host:port/);
    assert.throws(() => parseAllowance('10.0.0.1:70000'), /is not host:port/);
    assert.throws(() => parseAllowance('fd00::5:443'), /is not host:port/);
    assert.throws(() => allowancesOf({ scriptNetworkAccess: '10.0.0.1:80' }), /must be a list of "host:port" strings/);
    assert.throws(() => allowancesOf({ scriptNetworkAccess: ['10.0.0.1:80', 'x'] }), /scriptNetworkAccess: "x" is not host:port/);
    assert.throws(() => allowancesOf({ scriptNetworkAccess: Array.from({ length: 17 }, (_, i) => `10.0.0.${i}:80`) }), /at most 16/);
  });
});

describe('what the relay refuses', () => {
  const open = { allowPrivateNetworks: true };
  const endpoints = productEndpoints({
    AWS_ENDPOINT_URL_SECRETS_MANAGER: 'http://127.0.0.1:4010',
    AWS_ENDPOINT_URL_LAMBDA: 'http://localhost:4020',
    AUTH_ISSUER: 'http://0.0.0.0:9890',
    HOME: '/root',
  });

  it("takes the product's endpoints from the AWS endpoint overrides and the token issuer", () => {
    assert.deepEqual(endpoints, [
      { host: '127.0.0.1', port: 4010 },
      { host: 'localhost', port: 4020 },
      { host: '0.0.0.0', port: 9890 },
    ]);
  });

  it('refuses the stand-ins and the API on any local address, and metadata and link-local addresses always', () => {
    assert.match(relayRefusal({ host: '127.0.0.1', port: 4010 }, open, endpoints) ?? '', /VNFM's own endpoints/);
    assert.match(relayRefusal({ host: '127.0.0.2', port: 4020 }, open, endpoints) ?? '', /VNFM's own endpoints/);
    assert.match(relayRefusal({ host: '::1', port: 9890 }, open, endpoints) ?? '', /VNFM's own endpoints/);
    assert.match(relayRefusal({ host: '169.254.169.254', port: 80 }, open, endpoints) ?? '', /metadata/);
    assert.match(relayRefusal({ host: 'fd00:ec2::254', port: 80 }, open, endpoints) ?? '', /metadata/);
  });

  it('lets through what the egress policy allows on other ports and hosts', () => {
    assert.equal(relayRefusal({ host: '127.0.0.1', port: 4011 }, open, endpoints), undefined);
    assert.equal(relayRefusal({ host: '10.10.0.5', port: 4010 }, open, endpoints), undefined);
    assert.match(relayRefusal({ host: '10.10.0.5', port: 443 }, { allowPrivateNetworks: false }, endpoints) ?? '', /private address/);
  });
});
