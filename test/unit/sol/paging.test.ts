// SOL013 5.4 paging: signed nextpage_opaque_marker round trips, tampering, and the Link header.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { BadRequestError, InternalError } from '#lib/sol/errors.ts';
import { decodeMarker, encodeMarker, nextLink, type MarkerState } from '#lib/sol/paging.ts';

function assertBadRequest(fn: () => unknown, detail: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof BadRequestError, `expected BadRequestError, got ${String(error)}`);
    assert.equal(error.status, 400);
    assert.match(error.message, /^Invalid nextpage_opaque_marker/);
    assert.match(error.message, detail);
    return true;
  });
}

const KEY = 'test-marker-key';
const state: MarkerState = {
  v: 1,
  resource: 'vnf_instances',
  query: "filter=(eq,vnfInstanceName,'a,b')&fields=metadata",
  after: { pk: 'VNF#3f2a', sk: 'META', n: 42 },
};

/** A marker signed with KEY around an arbitrary payload, to reach the checks behind the signature. */
function signed(payloadText: string): string {
  const payload = Buffer.from(payloadText, 'utf8').toString('base64url');
  return `${payload}.${createHmac('sha256', KEY).update(payload).digest('base64url')}`;
}

describe('encodeMarker / decodeMarker', () => {
  it('round-trips the query state', () => {
    const marker = encodeMarker(state, KEY);
    assert.deepEqual(decodeMarker(marker, KEY, 'vnf_instances'), state);
  });

  it('round-trips non-ASCII text and an empty start key', () => {
    const other: MarkerState = { v: 1, resource: 'vnf_lcm_op_occs', query: 'filter=(eq,vnfInstanceName,wéb✓)', after: {} };
    assert.deepEqual(decodeMarker(encodeMarker(other, KEY), KEY, 'vnf_lcm_op_occs'), other);
  });

  it('produces a URL-safe token', () => {
    assert.match(encodeMarker(state, KEY), /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('accepts a Buffer key', () => {
    const key = Buffer.from('0123456789abcdef0123456789abcdef');
    assert.deepEqual(decodeMarker(encodeMarker(state, key), key, 'vnf_instances'), state);
  });

  it('rejects a marker with an altered payload', () => {
    const [, signature] = encodeMarker(state, KEY).split('.');
    const forged = Buffer.from(JSON.stringify({ ...state, after: { pk: 'VNF#other', sk: 'META', n: 42 } })).toString('base64url');
    assertBadRequest(() => decodeMarker(`${forged}.${signature}`, KEY, 'vnf_instances'), /signature mismatch/);
  });

  it('rejects a marker with an altered signature', () => {
    const marker = encodeMarker(state, KEY);
    const last = marker.at(-1) === 'A' ? 'B' : 'A';
    assertBadRequest(() => decodeMarker(marker.slice(0, -1) + last, KEY, 'vnf_instances'), /signature mismatch/);
    assertBadRequest(() => decodeMarker(marker.slice(0, -2), KEY, 'vnf_instances'), /signature mismatch/);
  });

  it('rejects a marker signed with another key', () => {
    assertBadRequest(() => decodeMarker(encodeMarker(state, 'other-key'), KEY, 'vnf_instances'), /signature mismatch/);
  });

  it('rejects a marker issued for another resource', () => {
    const marker = encodeMarker(state, KEY);
    assertBadRequest(() => decodeMarker(marker, KEY, 'vnf_lcm_op_occs'), /issued for "vnf_instances", not "vnf_lcm_op_occs"/);
  });

  describe('rejects malformed markers', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['empty', '', /the marker is empty/],
      ['no signature', 'eyJ2IjoxfQ', /malformed/],
      ['empty signature', 'eyJ2IjoxfQ.', /malformed/],
      ['three parts', 'a.b.c', /malformed/],
      ['not base64url', 'ab+c.de/f', /malformed/],
      ['padding', 'eyJ2IjoxfQ==.abc', /malformed/],
      ['too long', `${'a'.repeat(20_000)}.b`, /longer than 16384 characters/],
    ];
    for (const [name, raw, detail] of cases) {
      it(name, () => assertBadRequest(() => decodeMarker(raw, KEY, 'vnf_instances'), detail));
    }
  });

  describe('rejects well-signed markers with bad content', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['not JSON', 'not json', /the payload is not JSON/],
      ['JSON that is not an object', '[1,2]', /unexpected content/],
      ['unknown version', JSON.stringify({ ...state, v: 2 }), /unexpected content/],
      ['missing after', JSON.stringify({ v: 1, resource: 'vnf_instances', query: '' }), /unexpected content.*after/s],
      ['extra attribute', JSON.stringify({ ...state, admin: true }), /unexpected content/],
      ['boolean in the start key', JSON.stringify({ ...state, after: { pk: true } }), /unexpected content/],
      ['empty resource', JSON.stringify({ ...state, resource: '' }), /unexpected content/],
      ['numeric query', JSON.stringify({ ...state, query: 1 }), /unexpected content/],
    ];
    for (const [name, payload, detail] of cases) {
      it(name, () => assertBadRequest(() => decodeMarker(signed(payload), KEY, 'vnf_instances'), detail));
    }

    it('the signing helper itself produces accepted markers', () => {
      assert.deepEqual(decodeMarker(signed(JSON.stringify(state)), KEY, 'vnf_instances'), state);
    });
  });

  it('refuses to encode a state it could not decode, as a server error', () => {
    const bad = { ...state, after: { n: Number.POSITIVE_INFINITY } };
    assert.throws(
      () => encodeMarker(bad, KEY),
      (error: unknown) => error instanceof InternalError && error.status === 500,
    );
  });
});

describe('nextLink', () => {
  it('formats one Link header value with rel="next"', () => {
    assert.equal(
      nextLink('https://vnfm.example/vnflcm/v2/vnf_instances', 'abc.def'),
      '<https://vnfm.example/vnflcm/v2/vnf_instances?nextpage_opaque_marker=abc.def>; rel="next"',
    );
  });

  it('percent-encodes the marker', () => {
    assert.equal(
      nextLink('https://h/vnflcm/v2/vnf_instances', 'a+b/c=d&e f'),
      '<https://h/vnflcm/v2/vnf_instances?nextpage_opaque_marker=a%2Bb%2Fc%3Dd%26e%20f>; rel="next"',
    );
  });

  it('drops the query and fragment of the base URL', () => {
    assert.equal(
      nextLink('https://h:8443/vnflcm/v2/vnf_instances?filter=(eq,a,b)#x', 'm'),
      '<https://h:8443/vnflcm/v2/vnf_instances?nextpage_opaque_marker=m>; rel="next"',
    );
  });

  it('links a real marker that decodes back to the state', () => {
    const marker = encodeMarker(state, KEY);
    const header = nextLink('http://localhost:3000/vnflcm/v2/vnf_instances', marker);
    const match = /^<([^>]+)>; rel="next"$/.exec(header);
    assert.ok(match?.[1]);
    const raw = new URL(match[1]).searchParams.get('nextpage_opaque_marker');
    assert.equal(raw, marker);
    assert.deepEqual(decodeMarker(raw ?? '', KEY, 'vnf_instances'), state);
  });

  it('rejects a base URL that is not absolute http(s) as a server error', () => {
    for (const base of ['/vnflcm/v2/vnf_instances', 'ftp://h/x', 'not a url']) {
      assert.throws(
        () => nextLink(base, 'm'),
        (error: unknown) => error instanceof InternalError && error.status === 500,
        base,
      );
    }
  });
});
