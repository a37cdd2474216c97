// The stand-ins' SigV4 check (local/sigv4.ts) on its own: what a signature covers (method, path,
// query, signed headers, body), for which service, and for how long (15 minutes of clock skew; a
// presigned URL until it expires, as the SDK's presigner makes it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createHmac } from 'node:crypto';
import { newAwsCredentials, sha256Hex, signedHeaders, signingKey, signingKeysCached, verifySignature } from '#local/sigv4.ts';

const credentials = newAwsCredentials();
const ENDPOINT = 'http://127.0.0.1:4566/';
const SIGNED_AT = new Date('2026-12-01T10:00:00Z');
const MINUTE = 60_000;

/** A request as the server receives it, signed for `service` at SIGNED_AT. */
function signed(body: string, service = 'sqs', url = ENDPOINT): { method: string; url: string; headers: Record<string, string> } {
  const headers = signedHeaders({
    credentials,
    service,
    method: 'POST',
    url,
    headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'AmazonSQS.ListQueues' },
    body,
    now: SIGNED_AT,
  });
  const target = new URL(url);
  return { method: 'POST', url: `${target.pathname}${target.search}`, headers: { ...headers, host: target.host } };
}

const verify = (request: ReturnType<typeof signed>, body: string, options: { service?: string; at?: number } = {}) =>
  verifySignature(request, { credentials, service: options.service ?? 'sqs', bodySha256: sha256Hex(body), now: options.at ?? SIGNED_AT.getTime() });

test('a request signed with the credentials is accepted; a changed body, header, path or query is not', () => {
  const body = '{"QueueNamePrefix":"a"}';
  assert.equal(verify(signed(body), body), undefined);
  assert.equal(verify(signed(body), '{"QueueNamePrefix":"b"}')?.jsonType, 'InvalidSignatureException');
  const request = signed(body);
  assert.equal(verify({ ...request, headers: { ...request.headers, 'x-amz-target': 'AmazonSQS.DeleteQueue' } }, body)?.jsonType, 'InvalidSignatureException');
  assert.equal(verify({ ...request, url: '/other' }, body)?.jsonType, 'InvalidSignatureException');
  const withQuery = signed(body, 'sqs', `${ENDPOINT}path/a%20b?b=2&a=1`);
  assert.equal(verify(withQuery, body), undefined);
  assert.equal(verify({ ...withQuery, url: withQuery.url.replace('a=1', 'a=3') }, body)?.jsonType, 'InvalidSignatureException');
});

test('the signature is for one service, one key pair, and 15 minutes either side of the clock', () => {
  const body = '{}';
  assert.equal(verify(signed(body, 'states'), body)?.jsonType, 'IncompleteSignatureException');
  assert.equal(
    verifySignature(signed(body), { credentials: newAwsCredentials(), service: 'sqs', bodySha256: sha256Hex(body), now: SIGNED_AT.getTime() })?.jsonType,
    'UnrecognizedClientException',
  );
  assert.equal(
    verifySignature(signed(body), {
      credentials: { ...credentials, secretAccessKey: 'other' },
      service: 'sqs',
      bodySha256: sha256Hex(body),
      now: SIGNED_AT.getTime(),
    })?.jsonType,
    'InvalidSignatureException',
  );
  assert.equal(verify(signed(body), body, { at: SIGNED_AT.getTime() + 14 * MINUTE }), undefined);
  assert.equal(verify(signed(body), body, { at: SIGNED_AT.getTime() - 14 * MINUTE }), undefined);
  assert.match(verify(signed(body), body, { at: SIGNED_AT.getTime() + 16 * MINUTE })?.message ?? '', /Signature expired/);
  assert.match(verify(signed(body), body, { at: SIGNED_AT.getTime() - 16 * MINUTE })?.message ?? '', /Signature expired/);
});

test('a request with no signature is refused as missing one', () => {
  assert.deepEqual(
    verifySignature({ method: 'POST', url: '/', headers: { host: '127.0.0.1:4566' } }, { credentials, service: 'sqs', bodySha256: sha256Hex('') }),
    {
      jsonType: 'MissingAuthenticationTokenException',
      s3Code: 'AccessDenied',
      message: 'Request is missing Authentication Token',
    },
  );
});

test('an S3 URL presigned by the SDK is accepted until it expires, and only for what it names', async () => {
  const s3 = new S3Client({ endpoint: 'http://127.0.0.1:4569', region: 'us-east-1', forcePathStyle: true, credentials });
  const url = new URL(await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'packages', Key: 'a/b c.zip' }), { expiresIn: 900, signingDate: SIGNED_AT }));
  const request = { method: 'GET', url: `${url.pathname}${url.search}`, headers: { host: url.host } };
  const at = (ms: number) => verifySignature(request, { credentials, service: 's3', now: SIGNED_AT.getTime() + ms });
  assert.equal(at(0), undefined);
  assert.equal(at(14 * MINUTE), undefined);
  assert.deepEqual(at(16 * MINUTE), { jsonType: 'InvalidSignatureException', s3Code: 'AccessDenied', message: 'Request has expired' });
  assert.equal(verifySignature({ ...request, method: 'PUT' }, { credentials, service: 's3', now: SIGNED_AT.getTime() })?.s3Code, 'SignatureDoesNotMatch');
  assert.equal(
    verifySignature({ ...request, url: request.url.replace('/packages/', '/other/') }, { credentials, service: 's3', now: SIGNED_AT.getTime() })?.s3Code,
    'SignatureDoesNotMatch',
  );
});

test('signing keys are derived once a day, region, service and secret, and a kept key still refuses a wrong signature', () => {
  const derive = (secret: string, date: string, region: string, service: string) => {
    let key = createHmac('sha256', `AWS4${secret}`).update(date).digest();
    for (const part of [region, service, 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
    return key;
  };
  const body = '{"QueueNamePrefix":"a"}';
  // Verified twice: the second time with the kept key, which refuses a wrong signature all the same.
  for (let i = 0; i < 2; i += 1) {
    assert.equal(verify(signed(body), body), undefined);
    const request = signed(body);
    const wrong = request.headers.authorization?.replace(/Signature=([0-9a-f])/, (_, c: string) => `Signature=${c === '0' ? '1' : '0'}`);
    assert.notEqual(wrong, request.headers.authorization);
    assert.equal(verify({ ...request, headers: { ...request.headers, authorization: wrong as string } }, body)?.jsonType, 'InvalidSignatureException');
  }
  // The key kept is the one the four HMACs derive, and the same object the next time.
  const date = SIGNED_AT.toISOString().slice(0, 10).replace(/-/g, '');
  const kept = signingKey(credentials.secretAccessKey, date, 'us-east-1', 'sqs');
  assert.deepEqual(kept, derive(credentials.secretAccessKey, date, 'us-east-1', 'sqs'));
  assert.equal(signingKey(credentials.secretAccessKey, date, 'us-east-1', 'sqs'), kept);
  // Another day, region, service or secret: another key, derived anew.
  assert.deepEqual(
    signingKey(credentials.secretAccessKey, '20261202', 'us-east-1', 'sqs'),
    derive(credentials.secretAccessKey, '20261202', 'us-east-1', 'sqs'),
  );
  assert.deepEqual(signingKey(credentials.secretAccessKey, date, 'eu-west-1', 'sqs'), derive(credentials.secretAccessKey, date, 'eu-west-1', 'sqs'));
  assert.deepEqual(signingKey(credentials.secretAccessKey, date, 'us-east-1', 'dynamodb'), derive(credentials.secretAccessKey, date, 'us-east-1', 'dynamodb'));
  const rotated = { ...credentials, secretAccessKey: newAwsCredentials().secretAccessKey };
  assert.notDeepEqual(signingKey(rotated.secretAccessKey, date, 'us-east-1', 'sqs'), kept);
  // A request signed the next day is accepted (its own key), and one signed with the old secret is refused by the new one.
  const nextDay = new Date(SIGNED_AT.getTime() + 24 * 3600_000);
  const tomorrow = signedHeaders({ credentials, service: 'sqs', method: 'POST', url: ENDPOINT, body, now: nextDay });
  const request = { method: 'POST', url: '/', headers: { ...tomorrow, host: '127.0.0.1:4566' } };
  assert.equal(verifySignature(request, { credentials, service: 'sqs', bodySha256: sha256Hex(body), now: nextDay.getTime() }), undefined);
  assert.equal(
    verifySignature(request, { credentials: rotated, service: 'sqs', bodySha256: sha256Hex(body), now: nextDay.getTime() })?.jsonType,
    'InvalidSignatureException',
  );
  // Bounded: many secrets leave at most 64 keys.
  for (let i = 0; i < 200; i += 1) signingKey(`secret-${i}`, date, 'us-east-1', 'sqs');
  assert.ok(signingKeysCached() <= 64);
  assert.deepEqual(signingKey(credentials.secretAccessKey, date, 'us-east-1', 'sqs'), kept);
});
