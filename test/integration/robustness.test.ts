// No request can end the process: hostile requests over raw sockets (bad percent-encoding in HTTP
// Basic, a request target that is no URL, bodies cut off by a client that drops the connection,
// a damaged client store, and a seeded fuzz of header, URL and body framing) against `npm start`'s
// entry point. After each, the process must be alive and answer api_versions; every answer it
// gives to hostile input is a 4xx (ProblemDetails, or OAuth's error JSON on the token endpoint).
// Nor can losing its own output: a runtime whose stdout and stderr are gone goes on, and stops when told.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { adminCredentials, startVnfm, type LocalVnfm } from '../support/runtime.ts';
import { prng } from '../support/prng.ts';

let vnfm: LocalVnfm;
let apiPort: number;

before(async () => {
  vnfm = await startVnfm({ env: { VNFM_SCHEDULE_SCALE: '0' } });
  apiPort = Number(new URL(vnfm.url).port);
});
after(async () => {
  await vnfm?.stop();
});

interface RawReply {
  /** The status of the final (non-1xx) answer, if one came. */
  status?: number;
  head: string;
  body: string;
}

/** The first final (non-1xx) answer in what a server sent on a connection, its chunked body decoded. */
function parseReply(bytes: string): RawReply {
  let rest = bytes;
  while (/^HTTP\/1\.[01] 1\d\d/.test(rest) && rest.includes('\r\n\r\n')) rest = rest.slice(rest.indexOf('\r\n\r\n') + 4);
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(rest)?.[1];
  const end = rest.indexOf('\r\n\r\n');
  const head = end === -1 ? rest : rest.slice(0, end);
  let body = end === -1 ? '' : rest.slice(end + 4);
  if (/^transfer-encoding: *chunked/im.test(head)) {
    let decoded = '';
    for (let size = parseInt(body, 16); size > 0; size = parseInt(body, 16)) {
      const start = body.indexOf('\r\n') + 2;
      decoded += body.slice(start, start + size);
      body = body.slice(start + size + 2);
    }
    body = decoded;
  }
  return { status: status === undefined ? undefined : Number(status), head, body };
}

/**
 * Sends `bytes` on a new connection and waits until the server closes it (`close`: the request
 * says `Connection: close`, or is broken enough for the server to give up on it), or drops the
 * connection with a reset right after writing (`reset`). Resolves with what the server sent.
 * (A half-close would not do: Node's server closes a half-closed connection before a pending answer.)
 */
function exchange(port: number, bytes: string | Buffer, mode: 'close' | 'reset' = 'close'): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(bytes, () => {
        if (mode === 'reset') socket.resetAndDestroy();
      });
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // The server may reset a connection it refuses; that is an answer too.
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('close', () => resolve(parseReply(Buffer.concat(chunks).toString('latin1'))));
  });
}

/**
 * A request whose body the client abandons: the head (with `Expect: 100-continue`) goes first;
 * once the server says 100 Continue, so its handler is reading the body, part of the body is
 * written and the connection is reset.
 */
function abandonBody(port: number, head: string, partialBody: string): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let sentBody = false;
    const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (!sentBody && Buffer.concat(chunks).toString('latin1').startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
        sentBody = true;
        socket.write(partialBody, () => socket.resetAndDestroy());
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('close', () => resolve({ ...parseReply(Buffer.concat(chunks).toString('latin1')), ...(sentBody ? {} : { status: -1 }) }));
  });
}

async function assertStillServing(what: string): Promise<void> {
  assert.doesNotThrow(() => process.kill(vnfm.pid, 0), `the VNFM process is gone after ${what}:\n${vnfm.output().slice(-3000)}`);
  const response = await fetch(`${vnfm.url}/vnflcm/api_versions`).catch((error: unknown) => {
    assert.fail(`api_versions cannot be reached after ${what}: ${String(error)}\n${vnfm.output().slice(-3000)}`);
  });
  assert.equal(response.status, 200, `api_versions after ${what}`);
  await response.arrayBuffer();
}

function header(reply: RawReply, name: string): string | undefined {
  return new RegExp(`^${name}: *(.*)$`, 'im').exec(reply.head)?.[1]?.trim();
}

/** What a client that percent-encodes badly sends: base64 of `%E0%A4%A:x`. */
const BAD_PERCENT_BASIC = `Basic ${Buffer.from('%E0%A4%A:x').toString('base64')}`;

describe('hostile requests the issue names', () => {
  it('answers Basic credentials with bad percent-encoding on the token endpoint with 401 invalid_client', async () => {
    const body = 'grant_type=client_credentials';
    const reply = await exchange(
      apiPort,
      `POST /oauth2/token HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: ${BAD_PERCENT_BASIC}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    assert.equal(reply.status, 401, reply.head);
    assert.equal((JSON.parse(reply.body) as { error: string }).error, 'invalid_client');
    assert.match(header(reply, 'www-authenticate') ?? '', /^Basic /);
    await assertStillServing('bad percent-encoding in Basic on /oauth2/token');
  });

  it('answers Basic credentials with bad percent-encoding on an API route with 401 ProblemDetails and a challenge', async () => {
    const reply = await exchange(
      apiPort,
      `GET /vnflcm/v2/vnf_instances HTTP/1.1\r\nHost: x\r\nConnection: close\r\nVersion: 2.0.0\r\nAuthorization: ${BAD_PERCENT_BASIC}\r\n\r\n`,
    );
    assert.equal(reply.status, 401, reply.head);
    assert.equal(header(reply, 'content-type'), 'application/problem+json');
    assert.match(header(reply, 'www-authenticate') ?? '', /Bearer realm="vnfm"/);
    const problem = JSON.parse(reply.body) as { status: number; detail: string };
    assert.equal(problem.status, 401);
    assert.match(problem.detail, /Basic/);
    await assertStillServing('bad percent-encoding in Basic on an API route');
  });

  it('answers an absolute-form request target that is no URL with 400 ProblemDetails', async () => {
    const reply = await exchange(apiPort, 'GET http://[ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.equal(reply.status, 400, reply.head);
    assert.equal(header(reply, 'content-type'), 'application/problem+json');
    assert.equal((JSON.parse(reply.body) as { status: number }).status, 400);
    await assertStillServing('GET http://[');
  });

  for (const [route, head] of [
    ['an API route', 'POST /vnflcm/v2/vnf_instances HTTP/1.1\r\nHost: x\r\nVersion: 2.0.0\r\nContent-Type: application/json\r\n'],
    ['/oauth2/token', 'POST /oauth2/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n'],
  ] as const) {
    it(`survives a body cut off mid-way on ${route}`, async () => {
      const reply = await abandonBody(apiPort, `${head}Expect: 100-continue\r\nContent-Length: 4096\r\n\r\n`, '{"vnfdId": "cut-here');
      assert.notEqual(reply.status, -1, 'the server never said 100 Continue');
      assert.equal(reply.status, undefined, `no answer expected for an abandoned body: ${reply.head}`);
      await assertStillServing(`a body cut off on ${route}`);
    });
  }

  it('answers token requests with 503 ProblemDetails while clients.json is damaged, names it in the log, and recovers', async () => {
    const path = join(vnfm.dataDir, 'auth', 'clients.json');
    const good = readFileSync(path);
    const { clientId, clientSecret } = adminCredentials(vnfm);
    const body = `grant_type=client_credentials&client_id=${clientId}&client_secret=${encodeURIComponent(clientSecret)}`;
    const request = `POST /oauth2/token HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    try {
      writeFileSync(path, '{"clients": [ {"clientId": tru');
      const corrupt = await exchange(apiPort, request);
      assert.equal(corrupt.status, 503, corrupt.head);
      assert.equal(header(corrupt, 'content-type'), 'application/problem+json');
      assert.equal((JSON.parse(corrupt.body) as { status: number }).status, 503);
      assert.match(vnfm.output(), new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid JSON`));
      await assertStillServing('a token request with a corrupt clients.json');

      renameSync(path, `${path}.away`);
      const missing = await exchange(apiPort, request);
      assert.equal(missing.status, 503, missing.head);
      assert.match(vnfm.output(), /clients\.json is missing/);
      renameSync(`${path}.away`, path);
    } finally {
      writeFileSync(path, good);
    }
    const restored = await exchange(apiPort, request);
    assert.equal(restored.status, 200, restored.head);
  });
});

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'BREW', 'G\tET', ''];
const TARGETS = [
  '/vnflcm/api_versions',
  '/vnflcm/v2/vnf_instances',
  '/vnflcm/v2/vnf_instances/%E0%A4%A',
  '/vnflcm/v1/vnf_instances/%/instantiate',
  '/vnfpkgm/v2/vnf_packages/%ZZ/package_content',
  '/vnflcm/v2/vnf_instances?filter=(eq,id,%ZZ)&nextpage_opaque_marker=%',
  '/oauth2/token',
  '/oauth2/token?%E0=%A4',
  '/.well-known/jwks.json',
  '/_local/memory',
  '/_local/no-such-control',
  '/_local/schedules/%E0%A4%A/run',
  '/_local/schedules',
  'http://[',
  'http://x:99999/',
  'http://127.0.0.1/vnflcm/api_versions',
  '*',
  '//',
  '/%00',
  '/\u00ff',
  `/${'a'.repeat(20000)}`,
  '/vnflcm/v2/../../etc/passwd',
  '/v1.0/vims/%C0%AF',
];
const HEADERS = [
  `Authorization: ${BAD_PERCENT_BASIC}`,
  'Authorization: Basic %%%',
  'Authorization: Basic',
  'Authorization: Bearer',
  'Authorization: Bearer a.b.c',
  'Authorization: Negotiate xyz',
  `Authorization: Basic ${Buffer.from(':').toString('base64')}`,
  'X-Auth-Token: %E0%A4%A',
  'Version: 9.9.9',
  'Version: x',
  'Content-Type: application/json; charset=%%',
  'Content-Type: multipart/form-data; boundary=',
  'Accept: */*;q=nan',
  'Garbage-without-colon',
  'Bad Header: x',
  `X-Long: ${'x'.repeat(20000)}`,
  'Expect: 100-continue',
  'Expect: teapot',
  'Host: a',
  'Host: ',
  'Connection: upgrade',
  'Upgrade: websocket',
  'Cookie: \u0001',
];
const BODIES = ['', '{}', '{"vnfdId":', 'grant_type=client_credentials&client_id=%E0%A4%A', '\u0000\u00ff\u00fe', 'x'.repeat(3000)];
/** How the body is framed; the incomplete framings are only ever followed by a reset, so no exchange waits for bytes that never come. */
const FRAMINGS = ['exact', 'long', 'chunked', 'bad-chunk', 'bad-length', 'conflicting', 'none', 'short', 'unterminated-chunk'] as const;
const INCOMPLETE: ReadonlySet<string> = new Set(['short', 'unterminated-chunk']);

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

/** One fuzzed request: a request line, some headers, and a body framed one of several (mostly wrong) ways. */
function fuzzedRequest(random: () => number): { bytes: Buffer; mode: 'close' | 'reset'; target: string } {
  const target = pick(random, TARGETS);
  const lines = [`${pick(random, METHODS)} ${target} HTTP/1.${random() < 0.9 ? 1 : 0}`, 'Connection: close'];
  if (random() < 0.9) lines.push('Host: 127.0.0.1');
  for (let i = Math.floor(random() * 4); i > 0; i--) lines.push(pick(random, HEADERS));
  const body = pick(random, BODIES);
  const length = Buffer.byteLength(body, 'latin1');
  const framing = pick(random, FRAMINGS);
  const framed: Record<(typeof FRAMINGS)[number], [string[], string]> = {
    exact: [[`Content-Length: ${length}`], body],
    long: [[`Content-Length: ${Math.max(0, length - 1)}`], `${body}EXTRA`],
    chunked: [['Transfer-Encoding: chunked'], length ? `${length.toString(16)}\r\n${body}\r\n0\r\n\r\n` : '0\r\n\r\n'],
    'bad-chunk': [['Transfer-Encoding: chunked'], `zz\r\n${body}\r\n`],
    'bad-length': [[pick(random, ['Content-Length: -1', 'Content-Length: 1, 2', 'Content-Length: 0x10', 'Transfer-Encoding: gzip, chunked'])], body],
    conflicting: [[`Content-Length: ${length}`, 'Transfer-Encoding: chunked'], body],
    none: [[], ''],
    short: [[`Content-Length: ${length + 100}`], body],
    'unterminated-chunk': [['Transfer-Encoding: chunked'], `${(length + 50).toString(16)}\r\n${body}`],
  };
  const [framingHeaders, payload] = framed[framing];
  const bytes = Buffer.from(`${[...lines, ...framingHeaders].join('\r\n')}\r\n\r\n${payload}`, 'latin1');
  // Now and then the client drops the connection, maybe mid-request, instead of waiting for the answer.
  if (INCOMPLETE.has(framing) || random() < 0.15) return { bytes: bytes.subarray(0, Math.ceil(random() * bytes.length)), mode: 'reset', target };
  return { bytes, mode: 'close', target };
}

describe('fuzzed header, URL and body framing', () => {
  it('answers 300 seeded hostile requests with 4xx or a closed connection, and goes on serving', async () => {
    const random = prng(0x5eed_0003);
    const statuses = new Map<number, number>();
    for (let i = 0; i < 300; i++) {
      const { bytes, mode, target } = fuzzedRequest(random);
      const what = `fuzz case ${i}: ${JSON.stringify(bytes.toString('latin1').slice(0, 300))}`;
      const reply = await exchange(apiPort, bytes, mode);
      if (reply.status !== undefined) {
        statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
        assert.ok(reply.status < 500, `${what} -> ${reply.head}\n${reply.body}`);
        if (reply.status >= 400 && reply.body && !target.startsWith('/oauth2/token')) {
          assert.equal(header(reply, 'content-type'), 'application/problem+json', `${what} -> ${reply.head}`);
        }
      }
      await assertStillServing(what);
    }
    // The corpus reaches the handlers, the token endpoint and the parser alike.
    assert.ok((statuses.get(401) ?? 0) > 0 && (statuses.get(400) ?? 0) > 0, JSON.stringify([...statuses]));
  });

  it('leaves no error to the process-level guard: each request path handled its own input', () => {
    assert.doesNotMatch(vnfm.output(), /VNFM: (uncaught exception|unhandled rejection)/);
  });
});

describe('the stand-ins and simulators', () => {
  it('answer a target that is no URL, bad percent-encoding and a body cut off without ending the process', async () => {
    const endpoints = JSON.parse(readFileSync(join(vnfm.dataDir, 'endpoints.json'), 'utf8')) as Record<string, unknown>;
    const vims = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8')) as Record<string, { authUrl?: string; endpoint?: string }>;
    const servers: Array<[string, string]> = [
      ...['dynamodb', 's3', 'sqs', 'stepfunctions', 'secretsmanager', 'lambda'].map((name): [string, string] => [name, String(endpoints[name])]),
      ['OpenStack simulator', vims['local-openstack']?.authUrl as string],
      ['Kubernetes simulator', vims['local-kubernetes']?.endpoint as string],
    ];
    for (const [name, url] of servers) {
      const port = Number(new URL(url).port);
      const target = await exchange(port, 'GET http://[ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assert.ok(target.status === undefined || target.status < 500, `${name}: GET http://[ -> ${target.head}`);
      await assertStillServing(`${name}: GET http://[`);
      const percent = await exchange(
        port,
        'POST /2015-03-31/functions/%E0%A4%A/invocations HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n',
      );
      assert.ok(percent.status === undefined || percent.status < 500, `${name}: bad percent-encoding -> ${percent.head}`);
      await assertStillServing(`${name}: bad percent-encoding`);
      const cut = await abandonBody(
        port,
        'POST /_sim/faults HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.1\r\nX-Amz-Target: secretsmanager.ListSecrets\r\nExpect: 100-continue\r\nContent-Length: 4096\r\n\r\n',
        '{"kind": "cut-',
      );
      assert.notEqual(cut.status, -1, `${name}: never said 100 Continue`);
      await assertStillServing(`${name}: a body cut off`);
    }
    assert.doesNotMatch(vnfm.output(), /VNFM: (uncaught exception|unhandled rejection)/);
  });
});

describe('output that goes away', () => {
  it('a runtime whose stdout and stderr were closed goes on serving, then stops on SIGTERM with exit code 0', async () => {
    // As a terminal that closed, or the reader of `npm start | tee log` that ended: each write fails with EPIPE.
    const lost = await startVnfm();
    let exited = false;
    try {
      lost.closeOutput();
      for (let round = 0; round < 3; round++) {
        // A failed client authentication is logged (a write to the closed stdout)...
        const token = await fetch(`${lost.url}/oauth2/token`, {
          method: 'POST',
          headers: { Authorization: `Basic ${Buffer.from('nobody:wrong').toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials',
        });
        assert.equal(token.status, 401);
        // ...and the runtime still answers.
        assert.equal((await fetch(`${lost.url}/vnflcm/v2/api_versions`)).status, 200);
      }
      // Its stop is announced on the closed stderr; it must stop all the same. (The bound only turns a hang into a failure.)
      const code = await Promise.race([lost.stop('SIGTERM'), new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 60_000).unref())]);
      exited = code !== 'still running';
      assert.equal(code, 0);
    } finally {
      if (!exited) await lost.stop('SIGKILL');
    }
  });
});
