// SOL013 5.3 attribute selectors: parameter combinations and the trimmed representations.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BadRequestError } from '#lib/sol/errors.ts';
import { applySelectors, parseSelectors, type Selectors } from '#lib/sol/selectors.ts';

function assertBadRequest(fn: () => unknown, detail: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof BadRequestError, `expected BadRequestError, got ${String(error)}`);
    assert.equal(error.status, 400);
    assert.match(error.message, detail);
    return true;
  });
}

const parse = (query: string, attributes?: readonly string[]): Selectors =>
  parseSelectors(new URLSearchParams(query), attributes === undefined ? {} : { attributes });

describe('parseSelectors', () => {
  it('defaults to exclude_default when no selector is given', () => {
    assert.deepEqual(parse(''), { kind: 'exclude_default', fields: [] });
    assert.deepEqual(parse('filter=(eq,a,b)&nextpage_opaque_marker=x'), { kind: 'exclude_default', fields: [] });
  });

  it('reads bare all_fields and exclude_default keys', () => {
    assert.deepEqual(parse('all_fields'), { kind: 'all_fields' });
    assert.deepEqual(parse('all_fields='), { kind: 'all_fields' });
    assert.deepEqual(parse('exclude_default'), { kind: 'exclude_default', fields: [] });
  });

  it('accepts a Map of decoded parameters', () => {
    assert.deepEqual(parseSelectors(new Map([['all_fields', '']])), { kind: 'all_fields' });
    assert.deepEqual(parseSelectors(new Map([['fields', 'metadata']])), { kind: 'exclude_default', fields: [['metadata']] });
    assert.deepEqual(parseSelectors(new Map([['exclude-fields', 'a/b']])), { kind: 'exclude_fields', excludeFields: [['a', 'b']] });
    assertBadRequest(
      () =>
        parseSelectors(
          new Map([
            ['all_fields', ''],
            ['exclude_default', ''],
          ]),
        ),
      /all_fields cannot be combined with exclude_default/,
    );
  });

  it('splits fields into attribute paths', () => {
    assert.deepEqual(parse('fields=instantiatedVnfInfo/vnfcResourceInfo,metadata'), {
      kind: 'exclude_default',
      fields: [['instantiatedVnfInfo', 'vnfcResourceInfo'], ['metadata']],
    });
    assert.deepEqual(parse('fields=instantiatedVnfInfo%2FvnfcResourceInfo%2CvimConnectionInfo'), {
      kind: 'exclude_default',
      fields: [['instantiatedVnfInfo', 'vnfcResourceInfo'], ['vimConnectionInfo']],
    });
  });

  it('gives fields with and without exclude_default the same meaning', () => {
    assert.deepEqual(parse('exclude_default&fields=metadata'), parse('fields=metadata'));
    assert.deepEqual(parse('fields=metadata&exclude_default'), { kind: 'exclude_default', fields: [['metadata']] });
  });

  it('merges repeated fields parameters', () => {
    assert.deepEqual(parse('fields=a&fields=b/c'), { kind: 'exclude_default', fields: [['a'], ['b', 'c']] });
  });

  it('reads exclude_fields and its exclude-fields spelling alike', () => {
    const expected = { kind: 'exclude_fields', excludeFields: [['instantiatedVnfInfo', 'extCpInfo'], ['metadata']] };
    assert.deepEqual(parse('exclude_fields=instantiatedVnfInfo/extCpInfo,metadata'), expected);
    assert.deepEqual(parse('exclude-fields=instantiatedVnfInfo/extCpInfo,metadata'), expected);
    assert.deepEqual(parse('exclude_fields=instantiatedVnfInfo/extCpInfo&exclude-fields=metadata'), expected);
  });

  it('accepts known attributes when a list is given, checking the first segment', () => {
    assert.deepEqual(parse('fields=metadata/x', ['metadata']), { kind: 'exclude_default', fields: [['metadata', 'x']] });
    assert.deepEqual(parse('exclude_fields=metadata', ['metadata']), { kind: 'exclude_fields', excludeFields: [['metadata']] });
  });

  describe('rejects with 400', () => {
    const cases: Array<[string, RegExp]> = [
      ['all_fields&fields=a', /^all_fields cannot be combined with fields$/],
      ['all_fields&exclude_fields=a', /^all_fields cannot be combined with exclude_fields$/],
      ['all_fields&exclude-fields=a', /^all_fields cannot be combined with exclude-fields$/],
      ['all_fields&exclude_default', /^all_fields cannot be combined with exclude_default$/],
      ['all_fields&fields=a&exclude_default', /^all_fields cannot be combined with fields, exclude_default$/],
      ['fields=a&exclude_fields=b', /^fields cannot be combined with exclude_fields$/],
      ['fields=a&exclude-fields=b', /^fields cannot be combined with exclude-fields$/],
      ['exclude_default&exclude_fields=b', /^exclude_default cannot be combined with exclude_fields$/],
      ['exclude-fields=b&exclude_default', /^exclude_default cannot be combined with exclude-fields$/],
      ['fields', /^Invalid fields: it must list at least one attribute$/],
      ['fields=', /^Invalid fields: it must list at least one attribute$/],
      ['exclude_fields=', /^Invalid exclude_fields: it must list at least one attribute$/],
      ['exclude-fields', /^Invalid exclude-fields: it must list at least one attribute$/],
      ['fields=a,,b', /^Invalid fields: empty entry in "a,,b"$/],
      ['fields=a,', /^Invalid fields: empty entry in "a,"$/],
      ['fields=a//b', /^Invalid fields: empty attribute name in "a\/\/b"$/],
      ['exclude_fields=/a', /^Invalid exclude_fields: empty attribute name in "\/a"$/],
      ['fields=a/', /^Invalid fields: empty attribute name in "a\/"$/],
    ];
    for (const [query, detail] of cases) {
      it(JSON.stringify(query), () => assertBadRequest(() => parse(query), detail));
    }

    it('an unknown attribute when a list is given', () => {
      assertBadRequest(
        () => parse('fields=metadata,bogus/x', ['metadata', 'extensions']),
        /^Invalid fields: unknown attribute "bogus"; supported: metadata, extensions$/,
      );
      assertBadRequest(() => parse('exclude-fields=bogus', ['metadata']), /^Invalid exclude-fields: unknown attribute "bogus"/);
    });
  });
});

describe('applySelectors', () => {
  const DEFAULT_EXCLUDED = ['vimConnectionInfo', 'instantiatedVnfInfo', 'metadata', 'extensions'];
  const ALWAYS = ['id', '_links'];
  const vnfcResourceInfo = [
    { id: 'c1', vduId: 'VDU1', computeResource: { resourceId: 'r1' }, storageResourceIds: ['s1'] },
    { id: 'c2', vduId: 'VDU2', computeResource: { resourceId: 'r2' } },
  ];
  const vnf = {
    id: 'i1',
    vnfInstanceName: 'web',
    instantiationState: 'INSTANTIATED',
    vimConnectionInfo: { vim1: { vimType: 'kubernetes', accessInfo: { region: 'r' } } },
    instantiatedVnfInfo: { flavourId: 'small', vnfState: 'STARTED', extCpInfo: [{ id: 'cp1' }], vnfcResourceInfo },
    metadata: { tier: 'gold' },
    extensions: { x: 1 },
    _links: { self: { href: 'https://h/vnflcm/v2/vnf_instances/i1' }, instantiate: { href: 'https://h/x' } },
  };
  const simple = { id: 'i1', vnfInstanceName: 'web', instantiationState: 'INSTANTIATED', _links: vnf._links };
  const apply = (query: string, defaults = DEFAULT_EXCLUDED, always = ALWAYS): Record<string, unknown> => applySelectors(vnf, parse(query), defaults, always);

  it('all_fields returns everything, as a new object', () => {
    const out = apply('all_fields');
    assert.deepEqual(out, vnf);
    assert.notEqual(out, vnf);
  });

  it('exclude_default drops the default complex attributes', () => {
    assert.deepEqual(apply('exclude_default'), simple);
  });

  it('no selector behaves like exclude_default', () => {
    assert.deepEqual(apply(''), simple);
  });

  it('exclude_default with fields brings back the named attributes', () => {
    assert.deepEqual(apply('exclude_default&fields=metadata,vimConnectionInfo'), {
      ...simple,
      metadata: vnf.metadata,
      vimConnectionInfo: vnf.vimConnectionInfo,
    });
  });

  it('fields alone keeps the default exclusions except what it names', () => {
    assert.deepEqual(apply('fields=metadata'), { ...simple, metadata: vnf.metadata });
  });

  it('a field outside the default exclusions changes nothing', () => {
    assert.deepEqual(apply('fields=vnfInstanceName'), simple);
  });

  it('a nested field brings back just that part of an excluded parent', () => {
    assert.deepEqual(apply('fields=instantiatedVnfInfo/vnfcResourceInfo'), { ...simple, instantiatedVnfInfo: { vnfcResourceInfo } });
    assert.deepEqual(apply('exclude_default&fields=instantiatedVnfInfo/vnfcResourceInfo,instantiatedVnfInfo/flavourId'), {
      ...simple,
      instantiatedVnfInfo: { flavourId: 'small', vnfcResourceInfo },
    });
  });

  it('a nested field through an array projects each element', () => {
    assert.deepEqual(apply('fields=instantiatedVnfInfo/vnfcResourceInfo/vduId'), {
      ...simple,
      instantiatedVnfInfo: { vnfcResourceInfo: [{ vduId: 'VDU1' }, { vduId: 'VDU2' }] },
    });
    assert.deepEqual(apply('fields=instantiatedVnfInfo/vnfcResourceInfo/storageResourceIds'), {
      ...simple,
      instantiatedVnfInfo: { vnfcResourceInfo: [{ storageResourceIds: ['s1'] }, {}] },
    });
  });

  it('a projection through an array drops scalar elements, which have no attributes', () => {
    const resource = { id: 'x', items: [{ a: 1, b: 2 }, 'scalar', { b: 3 }] };
    assert.deepEqual(applySelectors(resource, parse('fields=items/a'), ['items']), { id: 'x', items: [{ a: 1 }, {}] });
  });

  it('naming a parent and its child keeps the whole parent', () => {
    assert.deepEqual(apply('fields=instantiatedVnfInfo/vnfcResourceInfo,instantiatedVnfInfo'), { ...simple, instantiatedVnfInfo: vnf.instantiatedVnfInfo });
  });

  it('supports nested default exclusions', () => {
    const defaults = ['instantiatedVnfInfo/vnfcResourceInfo', 'instantiatedVnfInfo/extCpInfo'];
    const { vnfcResourceInfo: _v, extCpInfo: _e, ...rest } = vnf.instantiatedVnfInfo;
    assert.deepEqual(apply('', defaults), { ...vnf, instantiatedVnfInfo: rest });
    assert.deepEqual(apply('fields=instantiatedVnfInfo/extCpInfo', defaults), {
      ...vnf,
      instantiatedVnfInfo: { ...rest, extCpInfo: vnf.instantiatedVnfInfo.extCpInfo },
    });
    assert.deepEqual(apply('fields=instantiatedVnfInfo', defaults), vnf);
  });

  it('applies nested default exclusions to each element of an array', () => {
    const resource = { id: 'x', items: [{ a: 1, heavy: [1, 2] }, { a: 2, heavy: [3] }, 'scalar'] };
    assert.deepEqual(applySelectors(resource, parse(''), ['items/heavy']), { id: 'x', items: [{ a: 1 }, { a: 2 }, 'scalar'] });
  });

  it('exclude_fields drops only the listed attributes, ignoring the default exclusions', () => {
    const { metadata: _m, ...rest } = vnf;
    assert.deepEqual(apply('exclude_fields=metadata'), rest);
  });

  it('exclude-fields is treated like exclude_fields', () => {
    assert.deepEqual(apply('exclude-fields=metadata,extensions'), apply('exclude_fields=metadata,extensions'));
    assert.equal('metadata' in apply('exclude-fields=metadata,extensions'), false);
    assert.equal('instantiatedVnfInfo' in apply('exclude-fields=metadata,extensions'), true);
  });

  it('a nested exclude_fields path removes just the nested part, in every array element', () => {
    const out = apply('exclude_fields=instantiatedVnfInfo/vnfcResourceInfo/computeResource,vimConnectionInfo/vim1/accessInfo');
    assert.deepEqual(out, {
      ...vnf,
      vimConnectionInfo: { vim1: { vimType: 'kubernetes' } },
      instantiatedVnfInfo: {
        ...vnf.instantiatedVnfInfo,
        vnfcResourceInfo: [
          { id: 'c1', vduId: 'VDU1', storageResourceIds: ['s1'] },
          { id: 'c2', vduId: 'VDU2' },
        ],
      },
    });
  });

  it('exclude_fields of an absent path changes nothing', () => {
    assert.deepEqual(apply('exclude_fields=nope,metadata/nope,instantiatedVnfInfo/flavourId/deeper'), vnf);
  });

  it('never excludes alwaysIncluded attributes', () => {
    const { metadata: _m, ...rest } = vnf;
    assert.deepEqual(apply('exclude_fields=id,_links,metadata'), rest);
    assert.deepEqual(apply('', [...DEFAULT_EXCLUDED, 'id', '_links']), simple);
  });

  it('keeps the protected part of an excluded parent', () => {
    assert.deepEqual(apply('exclude_fields=_links', DEFAULT_EXCLUDED, ['id', '_links/self']), { ...vnf, _links: { self: vnf._links.self } });
    assert.deepEqual(apply('exclude_fields=_links/self', DEFAULT_EXCLUDED, ['_links/self']), vnf);
  });

  it('without alwaysIncluded every attribute can be excluded', () => {
    const out = applySelectors({ id: 'x', a: { b: 1 } }, parse('exclude_fields=id,a'), []);
    assert.deepEqual(out, {});
  });

  it('does not mutate the resource and returns a new object every time', () => {
    const snapshot = structuredClone(vnf);
    for (const query of [
      '',
      'all_fields',
      'exclude_default',
      'fields=instantiatedVnfInfo/vnfcResourceInfo/vduId',
      'exclude_fields=instantiatedVnfInfo/vnfcResourceInfo/computeResource',
      'exclude_fields=nope',
      'fields=vnfInstanceName',
    ]) {
      const out = apply(query, query === 'fields=vnfInstanceName' ? [] : DEFAULT_EXCLUDED);
      assert.notEqual(out, vnf, query);
      assert.deepEqual(vnf, snapshot, query);
    }
  });
});
