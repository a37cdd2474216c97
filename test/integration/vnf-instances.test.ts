// SOL003 VNF instances over HTTP against the local runtime, every response checked against the
// ETSI SOL003 V3.7.1 OpenAPI schemas.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertEtsiResponse } from '../support/etsi.ts';
import { client, holdExecutions, packageRecord, seedPackage, setPackageState, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let pkg: { id: string; vnfdId: string };

before(async () => {
  vnfm = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: 'PageSize=3' } });
  call = client(vnfm);
  pkg = await seedPackage(vnfm);
});
after(async () => {
  await vnfm.stop();
});

function assertProblem(reply: Reply, status: number): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
  const body = reply.body as { status: number; detail: string };
  assert.equal(body.status, status);
  assert.ok(typeof body.detail === 'string' && body.detail.length > 0);
}

async function createInstance(name = 'vnf'): Promise<{ id: string; body: Record<string, unknown> }> {
  const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: pkg.vnfdId, vnfInstanceName: name } });
  assert.equal(reply.status, 201, reply.text);
  const body = reply.body as Record<string, unknown>;
  return { id: body.id as string, body };
}

async function countInstances(): Promise<number> {
  let total = 0;
  let next: string | null = '/vnflcm/v2/vnf_instances';
  while (next) {
    const reply: Reply = await call('GET', next);
    assert.equal(reply.status, 200);
    total += (reply.body as unknown[]).length;
    next = /<([^>]+)>; rel="next"/.exec(reply.headers.get('link') ?? '')?.[1] ?? null;
  }
  return total;
}

describe('API versions', () => {
  it('answers /vnflcm/api_versions and /vnflcm/v2/api_versions without a Version header', async () => {
    const all = await call('GET', '/vnflcm/api_versions', { version: null });
    assert.equal(all.status, 200);
    await assertEtsiResponse('vnflcm', '/api_versions', 'get', 200, all.body);
    assert.deepEqual(
      (all.body as { apiVersions: Array<{ version: string }> }).apiVersions.map((v) => v.version),
      ['1.3.0', '2.0.0'],
    );
    const v2 = await call('GET', '/vnflcm/v2/api_versions', { version: null });
    assert.equal(v2.status, 200);
    assert.equal((v2.body as { uriPrefix: string }).uriPrefix, '/vnflcm/v2');
    assert.equal(v2.headers.get('version'), '2.0.0');
  });

  it('answers /vnffm/api_versions and /vnffm/v1/api_versions (fault management is v1 only)', async () => {
    for (const [path, prefix] of [
      ['/vnffm/api_versions', '/vnffm'],
      ['/vnffm/v1/api_versions', '/vnffm/v1'],
    ] as const) {
      const reply = await call('GET', path, { version: null, token: null });
      assert.equal(reply.status, 200, `${path}: ${reply.text}`);
      assert.deepEqual(reply.body, { uriPrefix: prefix, apiVersions: [{ version: '1.5.0', isDeprecated: false }] });
      assert.equal(reply.headers.get('version'), '1.5.0');
    }
    assertProblem(await call('GET', '/vnffm/v2/api_versions', { version: null }), 404);
  });

  it('carries a Version header on every answer, also those given before a route runs (SOL013 4.9)', async () => {
    const cases: Array<[string, string, Parameters<typeof call>[2], number, string]> = [
      ['unversioned api_versions', '/vnflcm/api_versions', { version: null, token: null }, 200, '2.0.0'],
      ['unversioned package api_versions', '/vnfpkgm/api_versions', { version: null, token: null }, 200, '2.1.0'],
      ['missing Version', '/vnflcm/v2/vnf_instances', { version: null }, 400, '2.0.0'],
      ['unsupported Version', '/vnflcm/v2/vnf_instances', { version: '2.9.0' }, 406, '2.0.0'],
      ['no token', '/vnflcm/v2/vnf_instances', { token: null }, 401, '2.0.0'],
      ['no token on v1', '/vnflcm/v1/vnf_instances', { token: null }, 401, '1.3.0'],
      ['no such path', '/somewhere/else', { version: null }, 404, '2.0.0'],
      ['no such resource', '/vnfpkgm/v2/no_such_resource', { version: null }, 404, '2.1.0'],
      ['Accept that cannot be met', '/vnflcm/v2/vnf_instances', { headers: { Accept: 'application/xml' } }, 406, '2.0.0'],
    ];
    for (const [name, path, options, status, version] of cases) {
      const reply = await call('GET', path, options);
      assert.equal(reply.status, status, `${name}: ${reply.text}`);
      assert.equal(reply.headers.get('version'), version, name);
    }
  });
});

describe('POST /vnf_instances', () => {
  it('creates a NOT_INSTANTIATED instance from an enabled package: 201, Location, SOL003 body', async () => {
    const reply = await call('POST', '/vnflcm/v2/vnf_instances', {
      body: { vnfdId: pkg.vnfdId, vnfInstanceName: 'first', vnfInstanceDescription: 'd', metadata: { a: 1 } },
    });
    assert.equal(reply.status, 201, reply.text);
    await assertEtsiResponse('vnflcm', '/vnf_instances', 'post', 201, reply.body);
    const body = reply.body as Record<string, unknown> & { _links: { self: { href: string } } };
    assert.equal(reply.headers.get('location'), body._links.self.href);
    assert.equal(body.instantiationState, 'NOT_INSTANTIATED');
    assert.equal(body.vnfdId, pkg.vnfdId);
    assert.equal(body.vnfProvider, 'Company');
    assert.equal(reply.headers.get('version'), '2.0.0');
    assert.equal(reply.headers.get('accept-ranges'), 'none');
    const shown = await call('GET', new URL(body._links.self.href).pathname);
    assert.equal(shown.status, 200);
    await assertEtsiResponse('vnflcm', '/vnf_instances/{vnfInstanceId}', 'get', 200, shown.body);
    assert.deepEqual((shown.body as Record<string, unknown>).metadata, { a: 1 });
  });

  it('refuses bad input with ProblemDetails and stores nothing', async () => {
    const before = await countInstances();
    const cases: Array<[string, Parameters<typeof call>[2], number]> = [
      ['missing Version', { body: { vnfdId: pkg.vnfdId }, version: null }, 400],
      ['unsupported Version', { body: { vnfdId: pkg.vnfdId }, version: '3.0.0' }, 406],
      ['malformed Version', { body: { vnfdId: pkg.vnfdId }, version: 'latest' }, 400],
      ['malformed JSON', { raw: '{"vnfdId": ', headers: { 'Content-Type': 'application/json' } }, 400],
      ['wrong content type', { raw: 'vnfdId=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }, 415],
      ['wrong type', { body: { vnfdId: 42 } }, 400],
      ['missing vnfdId', { body: { vnfInstanceName: 'x' } }, 400],
      ['unknown attribute', { body: { vnfdId: pkg.vnfdId, flavourId: 'simple' } }, 400],
      ['not an object', { body: ['vnfdId'] }, 400],
      ['no body', {}, 400],
      ['oversize body', { body: { vnfdId: pkg.vnfdId, metadata: { blob: 'x'.repeat(1_100_000) } } }, 413],
      ['unknown vnfdId', { body: { vnfdId: 'no-such-vnfd' } }, 422],
      ['Accept that cannot be met', { body: { vnfdId: pkg.vnfdId }, headers: { Accept: 'application/xml' } }, 406],
    ];
    for (const [name, options, status] of cases) {
      const reply = await call('POST', '/vnflcm/v2/vnf_instances', options);
      assertProblem(reply, status);
      await assertEtsiResponse('vnflcm', '/vnf_instances', 'post', status === 413 || status === 415 ? 400 : status, reply.body).catch((error: Error) => {
        throw new Error(`${name}: ${error.message}`);
      });
    }
    assert.equal(await countInstances(), before);
  });

  it('creates from the package of its last instance of the VNFD only while that package is usable, counting each use once', async () => {
    const first = await seedPackage(vnfm);
    const create = () => call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: first.vnfdId } });
    const pkgOf = (reply: Reply) => (reply.body as { vnfPkgId?: string }).vnfPkgId;
    // The first create looks the package up; the next ones take the same package without reading it.
    for (let i = 0; i < 3; i += 1) assert.equal((await create()).status, 201);
    const taken = await packageRecord(vnfm, first.id);
    assert.deepEqual([taken?.instanceCount, taken?.usageState], [3, 'IN_USE']);
    // Disabled since: refused (422), and nothing more is counted on it.
    await setPackageState(vnfm, first.id, 'DISABLED');
    assertProblem(await create(), 422);
    assert.equal((await packageRecord(vnfm, first.id))?.instanceCount, 3);
    // Another package of the VNFD, enabled: the next create uses it; the disabled one stays as it was.
    const second = await seedPackage(vnfm, { vnfdId: first.vnfdId });
    const made = await call('POST', '/vnflcm/v1/vnf_instances', { body: { vnfdId: first.vnfdId } });
    assert.equal(made.status, 201, made.text);
    assert.equal(pkgOf(made), second.id);
    assert.equal((await create()).status, 201);
    assert.deepEqual([(await packageRecord(vnfm, first.id))?.instanceCount, (await packageRecord(vnfm, second.id))?.instanceCount], [3, 2]);
  });

  it('answers 422 for a package that is not ENABLED', async () => {
    const disabled = await seedPackage(vnfm, { operationalState: 'DISABLED' });
    assertProblem(await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: disabled.vnfdId } }), 422);
    const processing = await seedPackage(vnfm, { onboardingState: 'PROCESSING' });
    assertProblem(await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: processing.vnfdId } }), 422);
  });
});

describe('reading and listing', () => {
  it('answers 404, 405 and unknown paths with ProblemDetails', async () => {
    assertProblem(await call('GET', '/vnflcm/v2/vnf_instances/does-not-exist'), 404);
    const wrongMethod = await call('PUT', '/vnflcm/v2/vnf_instances', { body: {} });
    assertProblem(wrongMethod, 405);
    assert.match(wrongMethod.headers.get('allow') ?? '', /GET/);
    assertProblem(await call('GET', '/vnflcm/v2/no_such_resource'), 404);
    assertProblem(await call('GET', '/somewhere/else', { version: null }), 404);
    assertProblem(await call('GET', '/vnflcm/v2/vnf_lcm_op_occs/unknown'), 404);
    // An id no record can have (longer than a DynamoDB key, or with characters no id has) is a 404, never a store's 500.
    for (const id of ['x'.repeat(3000), encodeURIComponent('a b'), encodeURIComponent('\u00e9t\u00e9')]) {
      assertProblem(await call('GET', `/vnflcm/v2/vnf_instances/${id}`), 404);
      assertProblem(await call('GET', `/vnflcm/v2/vnf_lcm_op_occs/${id}`), 404);
      assertProblem(await call('GET', `/vnfpkgm/v2/vnf_packages/${id}`, { version: null }), 404);
      assertProblem(await call('DELETE', `/vnflcm/v2/subscriptions/${id}`), 404);
    }
  });

  it("answers the bench's node:http client as it answers fetch (test/support/runtime.ts ClientTransport)", async () => {
    const lean = client(vnfm, undefined, 'http');
    const created = await lean('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: pkg.vnfdId, vnfInstanceName: 'over-node-http' } });
    assert.equal(created.status, 201, created.text);
    const id = (created.body as { id: string }).id;
    assert.equal(created.headers.get('location'), `${vnfm.url}/vnflcm/v2/vnf_instances/${id}`);
    // The same exchanges, each way: status, body and every header but the date.
    const headersOf = (reply: Reply) => [...reply.headers].filter(([name]) => name !== 'date');
    for (const path of [
      `/vnflcm/v2/vnf_instances/${id}`,
      '/vnflcm/v2/vnf_instances?filter=(eq,vnfInstanceName,over-node-http)',
      '/vnflcm/v2/vnf_instances/unknown',
    ]) {
      const [viaFetch, viaHttp] = [await call('GET', path), await lean('GET', path)];
      assert.equal(viaHttp.status, viaFetch.status, path);
      assert.deepEqual(viaHttp.body, viaFetch.body, path);
      assert.deepEqual(headersOf(viaHttp), headersOf(viaFetch), path);
    }
    assertProblem(await lean('POST', '/vnflcm/v2/vnf_instances', { raw: '{"vnfdId":', headers: { 'Content-Type': 'application/json' } }), 400);
  });

  it('pages with one Link header whose marker carries the filter and selectors', async () => {
    const tag = `paged-${Date.now()}`;
    for (let i = 0; i < 7; i += 1) await createInstance(`${tag}-${i}`);
    const seen: string[] = [];
    let next: string | null = `/vnflcm/v2/vnf_instances?filter=(cont,vnfInstanceName,${tag})&fields=metadata`;
    let pages = 0;
    while (next) {
      const reply: Reply = await call('GET', next);
      assert.equal(reply.status, 200, reply.text);
      await assertEtsiResponse('vnflcm', '/vnf_instances', 'get', 200, reply.body);
      const items = reply.body as Array<Record<string, unknown>>;
      assert.ok(items.length <= 3);
      for (const item of items) {
        assert.ok(String(item.vnfInstanceName).startsWith(tag));
        assert.ok(!('vimConnectionInfo' in item) && !('instantiatedVnfInfo' in item));
        seen.push(item.id as string);
      }
      const links = (reply.headers.get('link') ?? '').split(/,\s*(?=<)/).filter(Boolean);
      assert.ok(links.length <= 1);
      next = links[0] ? (/<([^>]+)>; rel="next"/.exec(links[0])?.[1] ?? null) : null;
      if (next) assert.deepEqual([...new URL(next).searchParams.keys()], ['nextpage_opaque_marker']);
      pages += 1;
    }
    assert.equal(pages, 3);
    assert.equal(seen.length, 7);
    assert.equal(new Set(seen).size, 7);
  });

  it('applies filters and attribute selectors as SOL013 describes', async () => {
    const { id } = await createInstance('selectors');
    const byId = await call('GET', `/vnflcm/v2/vnf_instances?filter=(eq,id,${id})`);
    assert.deepEqual(
      (byId.body as Array<{ id: string }>).map((i) => i.id),
      [id],
    );
    const none = await call('GET', `/vnflcm/v2/vnf_instances?filter=(eq,id,${id});(eq,instantiationState,INSTANTIATED)`);
    assert.deepEqual(none.body, []);
    const quoted = await call('GET', `/vnflcm/v2/vnf_instances?filter=${encodeURIComponent(`(in,vnfInstanceName,'a,b',selectors)`)}`);
    assert.ok((quoted.body as Array<{ id: string }>).some((i) => i.id === id));
    const all = await call('GET', `/vnflcm/v2/vnf_instances?all_fields&filter=(eq,id,${id})`);
    assert.equal(all.status, 200);
    const excluded = await call('GET', `/vnflcm/v2/vnf_instances?exclude-fields=vnfProvider&filter=(eq,id,${id})`);
    assert.ok(!('vnfProvider' in ((excluded.body as Array<Record<string, unknown>>)[0] ?? {})));
    for (const query of [
      'filter=(eq,id',
      'filter=(zz,id,1)',
      'filter=(eq,noSuchAttribute,1)',
      'all_fields&fields=id',
      'fields=id&exclude_fields=metadata',
      'nextpage_opaque_marker=garbage',
      'unknown_parameter=1',
    ]) {
      assertProblem(await call('GET', `/vnflcm/v2/vnf_instances?${query}`), 400);
    }
  });
});

describe('PATCH /vnf_instances/{id} (MODIFY_INFO)', () => {
  it('runs as an op occ: 202 + Location, empty body, then COMPLETED with changedInfo', async () => {
    const { id } = await createInstance('before');
    const reply = await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, {
      body: {
        vnfInstanceName: 'after',
        metadata: { k: 'v' },
        vimConnectionInfo: {
          vim1: {
            vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
            interfaceInfo: { endpoint: 'http://keystone/v3' },
            accessInfo: { username: 'admin', password: 'S3cret-patch-pw', project: 'p' },
          },
        },
      },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(reply.status, 202, reply.text);
    assert.equal(reply.text, '');
    const location = reply.headers.get('location') ?? '';
    assert.match(location, /\/vnflcm\/v2\/vnf_lcm_op_occs\/[0-9a-f-]{36}$/);
    await settle(vnfm);
    const opOcc = await call('GET', new URL(location).pathname);
    assert.equal(opOcc.status, 200);
    await assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs/{vnfLcmOpOccId}', 'get', 200, opOcc.body);
    const occ = opOcc.body as Record<string, unknown> & { changedInfo: Record<string, unknown> };
    assert.equal(occ.operation, 'MODIFY_INFO');
    assert.equal(occ.operationState, 'COMPLETED');
    assert.equal(occ.vnfInstanceId, id);
    assert.equal(occ.changedInfo.vnfInstanceName, 'after');
    const instance = await call('GET', `/vnflcm/v2/vnf_instances/${id}`);
    const body = instance.body as Record<string, unknown> & { vimConnectionInfo: Record<string, Record<string, unknown>> };
    assert.equal(body.vnfInstanceName, 'after');
    assert.deepEqual(body.metadata, { k: 'v' });
    assert.equal(body.vimConnectionInfo.vim1?.vimType, 'ETSINFV.OPENSTACK_KEYSTONE.V_3');
    assert.ok(!('accessInfo' in (body.vimConnectionInfo.vim1 ?? {})));

    // The password is in no response, no list, no op occ and no log line.
    const everything = [
      instance.text,
      opOcc.text,
      (await call('GET', '/vnflcm/v2/vnf_instances?all_fields')).text,
      (await call('GET', '/vnflcm/v2/vnf_lcm_op_occs?all_fields')).text,
      (await call('GET', `/vnflcm/v1/vnf_instances/${id}`)).text,
      vnfm.output(),
    ];
    for (const text of everything) assert.ok(!text.includes('S3cret-patch-pw'));
    const probe = await call('GET', `/vnflcm/v2/vnf_instances?filter=${encodeURIComponent('(eq,vimConnectionInfo/accessInfo/password,S3cret-patch-pw)')}`);
    assert.deepEqual(probe.body, []);

    // A later modification can remove the connection again (merge patch null).
    const removal = await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, { body: { vimConnectionInfo: { vim1: null }, metadata: { k: null } } });
    assert.equal(removal.status, 202, removal.text);
    await settle(vnfm);
    const after = (await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).body as Record<string, unknown>;
    assert.deepEqual(after.vimConnectionInfo, {});
    assert.equal(after.metadata, undefined);
  });

  it('refuses bad modifications without starting anything', async () => {
    const { id } = await createInstance('bad-patch');
    const cases: Array<[Parameters<typeof call>[2], number]> = [
      [{ body: {} }, 400],
      [{ body: { vnfInstanceName: 5 } }, 400],
      [{ body: { noSuch: 1 } }, 400],
      [{ raw: '{', headers: { 'Content-Type': 'application/merge-patch+json' } }, 400],
      [{ raw: '{}', headers: { 'Content-Type': 'text/plain' } }, 415],
      [{ body: { vnfdId: 'no-such-vnfd' } }, 422],
      [{ body: { vimConnectionInfo: { vim9: { interfaceInfo: {} } } } }, 422],
    ];
    for (const [options, status] of cases) assertProblem(await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, options), status);
    assertProblem(await call('PATCH', '/vnflcm/v2/vnf_instances/unknown', { body: { vnfInstanceName: 'x' } }), 404);
    const occs = await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,${id})`);
    assert.deepEqual(occs.body, []);
  });

  it('accepts exactly one of 20 concurrent modifications; the rest get 409', async () => {
    const { id } = await createInstance('race');
    await holdExecutions(vnfm, true);
    let replies: Reply[];
    try {
      replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) => call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, { body: { vnfInstanceName: `racer-${i}` } })),
      );
    } finally {
      await holdExecutions(vnfm, false);
    }
    const accepted = replies.filter((r) => r.status === 202);
    const conflicts = replies.filter((r) => r.status === 409);
    assert.equal(accepted.length, 1, replies.map((r) => r.status).join(','));
    assert.equal(conflicts.length, 19);
    for (const conflict of conflicts) assertProblem(conflict, 409);
    await settle(vnfm);
    const occs = (await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,${id})&all_fields`)).body as Array<
      Record<string, unknown> & { changedInfo: { vnfInstanceName: string } }
    >;
    assert.equal(occs.length, 1);
    assert.equal(occs[0]?.operationState, 'COMPLETED');
    const instance = (await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).body as Record<string, unknown>;
    assert.equal(instance.vnfInstanceName, occs[0]?.changedInfo.vnfInstanceName);
    // The lock was released: the next modification is accepted.
    assert.equal((await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, { body: { vnfInstanceDescription: 'next' } })).status, 202);
    await settle(vnfm);
  });

  it('ends in FAILED_TEMP with the error as ProblemDetails when the modification cannot be applied', async () => {
    const { id } = await createInstance('fails');
    const other = await seedPackage(vnfm);
    await holdExecutions(vnfm, true);
    let reply: Reply;
    try {
      reply = await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, { body: { vnfdId: other.vnfdId } });
      assert.equal(reply.status, 202);
      await setPackageState(vnfm, other.id, 'DISABLED');
    } finally {
      await holdExecutions(vnfm, false);
    }
    await settle(vnfm);
    const occ = (await call('GET', new URL(reply.headers.get('location') ?? '').pathname)).body as Record<string, unknown> & {
      error: { status: number; detail: string };
      _links: Record<string, unknown>;
    };
    assert.equal(occ.operationState, 'FAILED_TEMP');
    assert.equal(occ.error.status, 422);
    assert.match(occ.error.detail, /not usable|DISABLED/);
    assert.ok(occ._links.retry && occ._links.rollback && occ._links.fail);
    // FAILED_TEMP keeps the lock: neither another operation nor a delete is accepted.
    assertProblem(await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, { body: { vnfInstanceName: 'x' } }), 409);
    assertProblem(await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`), 409);
    assert.equal((await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).status, 200);
  });
});

describe('DELETE /vnf_instances/{id}', () => {
  it('deletes an idle NOT_INSTANTIATED instance (204) and refuses one with an operation in progress (409)', async () => {
    const { id } = await createInstance('to-delete');
    await holdExecutions(vnfm, true);
    try {
      assert.equal((await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, { body: { vnfInstanceName: 'busy' } })).status, 202);
      assertProblem(await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`), 409);
    } finally {
      await holdExecutions(vnfm, false);
    }
    await settle(vnfm);
    const deleted = await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    assertProblem(await call('GET', `/vnflcm/v2/vnf_instances/${id}`), 404);
    assertProblem(await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`), 404);
  });
});

describe('/vnflcm/v1 (Tacker CLI default)', () => {
  it('serves the same instances in the v1 model without requiring a Version header', async () => {
    const created = await call('POST', '/vnflcm/v1/vnf_instances', { body: { vnfdId: pkg.vnfdId, vnfInstanceName: 'v1' }, version: null });
    assert.equal(created.status, 201, created.text);
    const body = created.body as Record<string, unknown> & { id: string };
    assert.equal(body.vnfPkgId, pkg.id);
    assert.equal(created.headers.get('version'), '1.3.0');
    const patched = await call('PATCH', `/vnflcm/v1/vnf_instances/${body.id}`, {
      body: { vimConnectionInfo: [{ id: 'vim-a', vimId: 'v', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.v_2', accessInfo: { password: 'v1-secret-pw' } }] },
      version: null,
    });
    assert.equal(patched.status, 202, patched.text);
    assert.match(patched.headers.get('location') ?? '', /\/vnflcm\/v1\/vnf_lcm_op_occs\//);
    await settle(vnfm);
    const v1 = (await call('GET', `/vnflcm/v1/vnf_instances/${body.id}`, { version: null })).body as { vimConnectionInfo: Array<Record<string, unknown>> };
    assert.deepEqual(v1.vimConnectionInfo, [{ id: 'vim-a', vimId: 'v', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.v_2' }]);
    const v2 = (await call('GET', `/vnflcm/v2/vnf_instances/${body.id}`)).body as { vimConnectionInfo: Record<string, unknown> };
    assert.deepEqual(Object.keys(v2.vimConnectionInfo), ['vim-a']);
    assertProblem(await call('GET', '/vnflcm/v1/vnf_instances', { version: '2.0.0' }), 406);
    const list = await call('GET', '/vnflcm/v1/vnf_lcm_op_occs', { version: null });
    assert.equal(list.status, 200);
    // The op occ in the v1 model too: changedInfo.vimConnectionInfo is an array (a map in v2).
    const opOccPath = new URL(patched.headers.get('location') ?? '').pathname;
    const v1OpOcc = (await call('GET', opOccPath, { version: null })).body as {
      changedInfo: { vimConnectionInfo: unknown };
      operationParams: { vimConnectionInfo: unknown };
    };
    assert.deepEqual(v1OpOcc.changedInfo.vimConnectionInfo, [{ id: 'vim-a', vimId: 'v', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.v_2' }]);
    assert.ok(Array.isArray(v1OpOcc.operationParams.vimConnectionInfo));
    const v2OpOcc = (await call('GET', opOccPath.replace('/v1/', '/v2/'))).body as { changedInfo: { vimConnectionInfo: unknown } };
    assert.deepEqual(Object.keys(v2OpOcc.changedInfo.vimConnectionInfo as object), ['vim-a']);
  });
});
