// SOL013 5.2 attribute-based filtering: parser grammar and errors, and evaluation semantics.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BadRequestError } from '#lib/sol/errors.ts';
import { FILTER_OPERATORS, matchesFilter, parseFilter, type Filter } from '#lib/sol/filter.ts';

function assertBadRequest(fn: () => unknown, detail: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof BadRequestError, `expected BadRequestError, got ${String(error)}`);
    assert.equal(error.status, 400);
    assert.match(error.message, detail);
    return true;
  });
}

const matches = (filter: string, resource: unknown): boolean => matchesFilter(parseFilter(filter), resource);

describe('parseFilter', () => {
  it('parses one expression into op, path and values', () => {
    assert.deepEqual(parseFilter('(eq,vnfInstanceName,web)'), {
      expressions: [{ op: 'eq', path: ['vnfInstanceName'], values: ['web'] }],
    });
  });

  it('accepts every SOL013 operator', () => {
    for (const op of FILTER_OPERATORS) {
      assert.equal(parseFilter(`(${op},a,1)`).expressions[0]?.op, op);
    }
    assert.equal(FILTER_OPERATORS.length, 10);
  });

  it('splits attribute paths on "/"', () => {
    assert.deepEqual(parseFilter('(eq,instantiatedVnfInfo/vnfcResourceInfo/vduId,VDU1)').expressions[0]?.path, [
      'instantiatedVnfInfo',
      'vnfcResourceInfo',
      'vduId',
    ]);
  });

  it('accepts value lists for eq, neq, in, nin, cont and ncont', () => {
    for (const op of ['eq', 'neq', 'in', 'nin', 'cont', 'ncont']) {
      assert.deepEqual(parseFilter(`(${op},a,x,y,z)`).expressions[0]?.values, ['x', 'y', 'z']);
    }
  });

  it('combines expressions separated by ";"', () => {
    const filter = parseFilter('(eq,a,1);(neq,b/c,2);(in,d,3,4)');
    assert.deepEqual(filter.expressions, [
      { op: 'eq', path: ['a'], values: ['1'] },
      { op: 'neq', path: ['b', 'c'], values: ['2'] },
      { op: 'in', path: ['d'], values: ['3', '4'] },
    ]);
  });

  it('takes , ) ( ; literally inside single quotes', () => {
    assert.deepEqual(parseFilter("(eq,a,'x,y)z(;w')").expressions[0]?.values, ['x,y)z(;w']);
  });

  it("unescapes '' inside a quoted value to one quote", () => {
    assert.deepEqual(parseFilter("(eq,a,'it''s')").expressions[0]?.values, ["it's"]);
    assert.deepEqual(parseFilter("(eq,a,'''')").expressions[0]?.values, ["'"]);
    assert.deepEqual(parseFilter("(eq,a,'a''''b')").expressions[0]?.values, ["a''b"]);
  });

  it("reads '' as the empty string", () => {
    assert.deepEqual(parseFilter("(eq,a,'')").expressions[0]?.values, ['']);
  });

  it('mixes quoted and unquoted values in one list', () => {
    assert.deepEqual(parseFilter("(in,a,'x,1',y,'')").expressions[0]?.values, ['x,1', 'y', '']);
  });

  it('keeps spaces, "(" and ";" of unquoted values', () => {
    assert.deepEqual(parseFilter('(eq,name,my vnf)').expressions[0]?.values, ['my vnf']);
    assert.deepEqual(parseFilter('(eq,a,b;c(d)').expressions[0]?.values, ['b;c(d']);
  });

  it('parses a quoted value followed by ";" and another expression', () => {
    const filter = parseFilter("(eq,a,'x;y');(eq,b,'z)')");
    assert.deepEqual(
      filter.expressions.map((e) => e.values),
      [['x;y'], ['z)']],
    );
  });

  it('accepts supported attributes, checking only the first path segment', () => {
    const attributes = ['vnfInstanceName', 'vimConnectionInfo'];
    assert.equal(parseFilter('(eq,vnfInstanceName,x)', { attributes }).expressions.length, 1);
    assert.deepEqual(parseFilter('(eq,vimConnectionInfo/vimType,x)', { attributes }).expressions[0]?.path, ['vimConnectionInfo', 'vimType']);
  });

  describe('rejects with 400', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /^Invalid filter: the filter is empty$/],
      ['eq,a,b', /expected "\(" at position 0 but found "e"/],
      [' (eq,a,b)', /expected "\(" at position 0 but found " "/],
      ['(eqq,a,b)', /^Invalid filter: unknown operator "eqq" in "\(eqq,a,b\)"$/],
      ['(EQ,a,b)', /unknown operator "EQ"/],
      ['(,a,b)', /missing operator in "\(,a,b\)"/],
      ['(eq)', /missing attribute and value in "\(eq\)"/],
      ['(eq,a)', /missing value in "\(eq,a\)"/],
      ['(eq,,b)', /missing attribute in "\(eq,,b\)"/],
      ['(eq,a//b,c)', /empty attribute name in "a\/\/b"/],
      ['(eq,/a,c)', /empty attribute name in "\/a"/],
      ['(eq,a/,c)', /empty attribute name in "a\/"/],
      ['(eq, a,b)', /invalid attribute name " a"/],
      ["(eq,a'b,c)", /invalid attribute name "a'b"/],
      ['(eq,a,)', /empty value in "\(eq,a,\)"/],
      ['(eq,a,b,)', /empty value in "\(eq,a,b,\)"/],
      ['(eq,a,b', /missing "\)" in "\(eq,a,b"/],
      ['(eq,a', /missing "\)" in "\(eq,a"/],
      ['(eq', /missing "\)" in "\(eq"/],
      ["(eq,a,'b'", /missing "\)"/],
      ['((eq,a,b)', /unbalanced parentheses/],
      ['(eq,a,b))', /unbalanced parentheses: unexpected "\)" at position 8/],
      ['(eq,a,b)x', /unexpected "x" at position 8 after "\(eq,a,b\)"/],
      ['(eq,a,b)(eq,c,d)', /unexpected "\(" at position 8 .*separated by ";"/],
      ['(eq,a,b);', /expected an expression after ";"/],
      [';(eq,a,b)', /expected "\(" at position 0 but found ";"/],
      ['(eq,a,b);;(eq,c,d)', /expected "\(" at position 9 but found ";"/],
      ["(eq,a,'b)", /unterminated quoted value/],
      ["(eq,a,'b'')", /unterminated quoted value/],
      ["(eq,a,'b''')x", /unexpected "x" at position 12/],
      ["(eq,a,'b'c)", /unexpected "c" after quoted value/],
      ["(eq,a,o'b)", /value "o'b" contains a single quote/],
      ['(gt,a,1,2)', /operator "gt" takes exactly one value but got 2/],
      ['(gte,a,1,2)', /operator "gte" takes exactly one value/],
      ['(lt,a,1,2)', /operator "lt" takes exactly one value/],
      ['(lte,a,1,2,3)', /operator "lte" takes exactly one value but got 3/],
      ['(eq,a,b);(eqq,c,d)', /unknown operator "eqq" in "\(eqq,c,d\)"/],
    ];
    for (const [raw, detail] of cases) {
      it(JSON.stringify(raw), () => assertBadRequest(() => parseFilter(raw), detail));
    }

    it('an attribute outside options.attributes, naming it', () => {
      assertBadRequest(
        () => parseFilter('(eq,vnfInstanceName,x);(eq,secret/a,1)', { attributes: ['vnfInstanceName'] }),
        /attribute "secret" is not supported for filtering \(in "\(eq,secret\/a,1\)"\); supported: vnfInstanceName/,
      );
    });

    it('caps the echoed expression in long details', () => {
      const raw = `(eqq,a,${'x'.repeat(1000)})`;
      assert.throws(
        () => parseFilter(raw),
        (error: unknown) => error instanceof BadRequestError && error.message.length < 400,
      );
    });
  });
});

describe('matchesFilter', () => {
  const vnf = {
    id: 'i1',
    vnfInstanceName: 'web-01',
    vnfProvider: "O'Reilly, Inc. (east)",
    vnfdVersion: '1.10',
    instantiationState: 'INSTANTIATED',
    description: null,
    metadata: { tier: 'gold', replicas: 3, ratio: 0.5, enabled: true, tags: ['a', 'b'] },
    vimConnectionInfo: {
      vim1: { vimId: 'v1', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3' },
      vim2: { vimType: 'kubernetes' },
    },
    instantiatedVnfInfo: {
      flavourId: 'small',
      scaleStatus: [
        { aspectId: 'a1', scaleLevel: 2 },
        { aspectId: 'a2', scaleLevel: 0 },
      ],
      vnfcResourceInfo: [{ vduId: 'VDU1', storageResourceIds: ['s1', 's2'] }, { vduId: 'VDU2' }],
    },
  };

  describe('eq / neq / in / nin', () => {
    it('eq compares strings exactly', () => {
      assert.equal(matches('(eq,vnfInstanceName,web-01)', vnf), true);
      assert.equal(matches('(eq,vnfInstanceName,web)', vnf), false);
      assert.equal(matches('(eq,vnfInstanceName,WEB-01)', vnf), false);
    });

    it('eq with several values matches any of them', () => {
      assert.equal(matches('(eq,instantiationState,NOT_INSTANTIATED,INSTANTIATED)', vnf), true);
      assert.equal(matches('(eq,instantiationState,NOT_INSTANTIATED,x)', vnf), false);
    });

    it('neq matches when the attribute equals none of the values', () => {
      assert.equal(matches('(neq,instantiationState,NOT_INSTANTIATED)', vnf), true);
      assert.equal(matches('(neq,instantiationState,INSTANTIATED)', vnf), false);
      assert.equal(matches('(neq,instantiationState,x,INSTANTIATED)', vnf), false);
    });

    it('in and nin test membership', () => {
      assert.equal(matches('(in,metadata/tier,silver,gold)', vnf), true);
      assert.equal(matches('(in,metadata/tier,silver,bronze)', vnf), false);
      assert.equal(matches('(nin,metadata/tier,silver,bronze)', vnf), true);
      assert.equal(matches('(nin,metadata/tier,silver,gold)', vnf), false);
    });

    it('a missing attribute matches no positive operator but every negative one', () => {
      for (const op of ['eq', 'in', 'cont', 'gt', 'gte', 'lt', 'lte']) assert.equal(matches(`(${op},nope,1)`, vnf), false, op);
      for (const op of ['neq', 'nin', 'ncont']) assert.equal(matches(`(${op},nope,1)`, vnf), true, op);
      assert.equal(matches('(eq,metadata/nope/deeper,1)', vnf), false);
    });

    it('treats null as absent', () => {
      assert.equal(matches('(eq,description,null)', vnf), false);
      assert.equal(matches('(neq,description,null)', vnf), true);
    });

    it('never matches an object with eq', () => {
      assert.equal(matches('(eq,metadata,[object Object])', vnf), false);
      assert.equal(matches('(neq,metadata,x)', vnf), true);
    });
  });

  describe('cont / ncont', () => {
    it('cont is a substring test', () => {
      assert.equal(matches('(cont,vnfInstanceName,eb-0)', vnf), true);
      assert.equal(matches('(cont,vnfInstanceName,db)', vnf), false);
      assert.equal(matches('(cont,vnfInstanceName,db,-01)', vnf), true);
    });

    it('ncont matches when no value is a substring', () => {
      assert.equal(matches('(ncont,vnfInstanceName,db,cache)', vnf), true);
      assert.equal(matches('(ncont,vnfInstanceName,db,web)', vnf), false);
    });

    it('applies to strings only', () => {
      assert.equal(matches('(cont,metadata/replicas,3)', vnf), false);
      assert.equal(matches('(cont,metadata/enabled,true)', vnf), false);
      assert.equal(matches('(ncont,metadata/replicas,3)', vnf), true);
    });
  });

  describe('gt / gte / lt / lte', () => {
    it('compares numbers numerically', () => {
      assert.equal(matches('(gt,metadata/replicas,2)', vnf), true);
      assert.equal(matches('(gt,metadata/replicas,3)', vnf), false);
      assert.equal(matches('(gte,metadata/replicas,3)', vnf), true);
      assert.equal(matches('(gte,metadata/replicas,4)', vnf), false);
      assert.equal(matches('(lt,metadata/replicas,3)', vnf), false);
      assert.equal(matches('(lt,metadata/replicas,10)', vnf), true); // "3" < "10" would be false
      assert.equal(matches('(lte,metadata/replicas,3)', vnf), true);
      assert.equal(matches('(lte,metadata/replicas,2.5)', vnf), false);
      assert.equal(matches('(gt,metadata/ratio,.25)', vnf), true);
      assert.equal(matches('(lt,metadata/ratio,-1)', vnf), false);
    });

    it('compares strings lexicographically', () => {
      assert.equal(matches('(gt,vnfInstanceName,web-00)', vnf), true);
      assert.equal(matches('(lt,vnfInstanceName,web-00)', vnf), false);
      assert.equal(matches('(gt,vnfdVersion,1.9)', vnf), false);
      assert.equal(matches('(lte,vnfdVersion,1.10)', vnf), true);
      assert.equal(matches('(gte,vnfdVersion,1.11)', vnf), false);
    });

    it('compares ISO 8601 timestamps chronologically', () => {
      const op = { startTime: '2024-03-01T10:00:00Z' };
      assert.equal(matches('(gte,startTime,2024-02-29T23:59:59Z)', op), true);
      assert.equal(matches('(lt,startTime,2024-02-29T23:59:59Z)', op), false);
    });

    it('does not order booleans', () => {
      assert.equal(matches('(gt,metadata/enabled,false)', vnf), false);
      assert.equal(matches('(lte,metadata/enabled,true)', vnf), false);
    });
  });

  describe('numbers and booleans', () => {
    it('reads the filter value as a number when the attribute is one', () => {
      assert.equal(matches('(eq,metadata/replicas,3)', vnf), true);
      assert.equal(matches('(eq,metadata/replicas,3.0)', vnf), true);
      assert.equal(matches('(eq,metadata/replicas,3e0)', vnf), true);
      assert.equal(matches('(eq,metadata/replicas,4)', vnf), false);
      assert.equal(matches('(eq,metadata/ratio,0.5)', vnf), true);
    });

    it('never matches a non-numeric value against a number', () => {
      for (const value of ['three', "''", '0x3', '3abc', 'Infinity']) {
        assert.equal(matches(`(eq,metadata/replicas,${value})`, vnf), false, value);
        assert.equal(matches(`(gt,metadata/replicas,${value})`, vnf), false, value);
        assert.equal(matches(`(lt,metadata/replicas,${value})`, vnf), false, value);
      }
      assert.equal(matches('(neq,metadata/replicas,three)', vnf), true);
      assert.equal(matches("(eq,zero,'')", { zero: 0 }), false);
    });

    it('compares booleans to "true" and "false"', () => {
      assert.equal(matches('(eq,metadata/enabled,true)', vnf), true);
      assert.equal(matches('(eq,metadata/enabled,false)', vnf), false);
      assert.equal(matches('(neq,metadata/enabled,false)', vnf), true);
      assert.equal(matches('(eq,metadata/enabled,TRUE)', vnf), false);
      assert.equal(matches('(eq,metadata/enabled,1)', vnf), false);
      assert.equal(matches('(in,metadata/enabled,false,true)', vnf), true);
    });

    it('compares a numeric-looking string as a string', () => {
      assert.equal(matches('(eq,code,007)', { code: '007' }), true);
      assert.equal(matches('(eq,code,7)', { code: '007' }), false);
    });
  });

  describe('paths', () => {
    it('walks nested objects', () => {
      assert.equal(matches('(eq,instantiatedVnfInfo/flavourId,small)', vnf), true);
      assert.equal(matches('(eq,instantiatedVnfInfo/flavourId,big)', vnf), false);
    });

    it('applies the rest of the path to each element of an array', () => {
      assert.equal(matches('(eq,instantiatedVnfInfo/vnfcResourceInfo/vduId,VDU2)', vnf), true);
      assert.equal(matches('(eq,instantiatedVnfInfo/vnfcResourceInfo/vduId,VDU3)', vnf), false);
      assert.equal(matches('(gt,instantiatedVnfInfo/scaleStatus/scaleLevel,1)', vnf), true);
      assert.equal(matches('(lt,instantiatedVnfInfo/scaleStatus/scaleLevel,0)', vnf), false);
    });

    it('negative operators over arrays require that no element matches', () => {
      assert.equal(matches('(neq,instantiatedVnfInfo/vnfcResourceInfo/vduId,VDU2)', vnf), false);
      assert.equal(matches('(neq,instantiatedVnfInfo/vnfcResourceInfo/vduId,VDU3)', vnf), true);
      assert.equal(matches('(nin,instantiatedVnfInfo/vnfcResourceInfo/vduId,VDU3,VDU1)', vnf), false);
      assert.equal(matches('(ncont,instantiatedVnfInfo/vnfcResourceInfo/vduId,DU1)', vnf), false);
    });

    it('flattens arrays at the end of the path and nested arrays', () => {
      assert.equal(matches('(eq,instantiatedVnfInfo/vnfcResourceInfo/storageResourceIds,s2)', vnf), true);
      assert.equal(matches('(eq,instantiatedVnfInfo/vnfcResourceInfo/storageResourceIds,s3)', vnf), false);
      assert.equal(matches('(in,metadata/tags,x,b)', vnf), true);
      assert.equal(matches('(eq,grid/v,4)', { grid: [[{ v: 1 }], [{ v: 4 }]] }), true);
    });

    it('applies an attribute that is not a key of a map to each value of the map', () => {
      assert.equal(matches('(eq,vimConnectionInfo/vimType,kubernetes)', vnf), true);
      assert.equal(matches('(eq,vimConnectionInfo/vimType,openstack)', vnf), false);
      assert.equal(matches('(neq,vimConnectionInfo/vimType,kubernetes)', vnf), false);
      assert.equal(matches('(cont,vimConnectionInfo/vimType,KEYSTONE)', vnf), true);
    });

    it('handles the array form of a map attribute the same way', () => {
      const v1 = { vimConnectionInfo: [{ id: 'vim1', vimType: 'kubernetes' }] };
      assert.equal(matches('(eq,vimConnectionInfo/vimType,kubernetes)', v1), true);
      assert.equal(matches('(eq,vimConnectionInfo/vimType,openstack)', v1), false);
    });

    it('uses map keys as attribute names when they exist', () => {
      assert.equal(matches('(eq,vimConnectionInfo/vim2/vimType,kubernetes)', vnf), true);
      assert.equal(matches('(eq,vimConnectionInfo/vim1/vimType,kubernetes)', vnf), false);
    });

    it('supports the @key pseudo attribute for map keys', () => {
      assert.equal(matches('(eq,vimConnectionInfo/@key,vim2)', vnf), true);
      assert.equal(matches('(eq,vimConnectionInfo/@key,vim3)', vnf), false);
      assert.equal(matches('(nin,vimConnectionInfo/@key,vim3)', vnf), true);
    });

    it('looks into map values one level only', () => {
      // vduId sits under instantiatedVnfInfo/vnfcResourceInfo/*, two levels below instantiatedVnfInfo
      assert.equal(matches('(eq,instantiatedVnfInfo/vduId,VDU1)', vnf), false);
      assert.equal(matches('(eq,a/x,1)', { a: { m: { n: { x: 1 } } } }), false);
      assert.equal(matches('(eq,a/x,1)', { a: { m: { x: 1 } } }), true);
    });

    it('reaches nothing through a scalar', () => {
      assert.equal(matches('(eq,vnfInstanceName/length,6)', vnf), false);
      assert.equal(matches('(eq,a,1)', null), false);
      assert.equal(matches('(eq,a,1)', 'a'), false);
    });

    it('ignores inherited properties', () => {
      const resource: unknown = Object.assign(Object.create({ inherited: 'yes' }), { own: 'yes' });
      assert.equal(matches('(eq,own,yes)', resource), true);
      assert.equal(matches('(eq,inherited,yes)', resource), false);
      assert.equal(matches('(eq,constructor/name,Object)', {}), false);
    });
  });

  it('requires every ";"-separated expression to match', () => {
    assert.equal(matches('(eq,vnfInstanceName,web-01);(eq,metadata/tier,gold)', vnf), true);
    assert.equal(matches('(eq,vnfInstanceName,web-01);(eq,metadata/tier,silver)', vnf), false);
    assert.equal(matches('(eq,vnfInstanceName,db);(eq,metadata/tier,gold)', vnf), false);
  });

  it('matches quoted values containing quotes, commas and parentheses', () => {
    assert.equal(matches("(eq,vnfProvider,'O''Reilly, Inc. (east)')", vnf), true);
    assert.equal(matches("(cont,vnfProvider,', Inc. (')", vnf), true);
    assert.equal(matches("(eq,vnfProvider,'O''Reilly, Inc.')", vnf), false);
  });

  it('evaluates a hand-built Filter', () => {
    const filter: Filter = { expressions: [{ op: 'in', path: ['metadata', 'tier'], values: ['gold'] }] };
    assert.equal(matchesFilter(filter, vnf), true);
    assert.equal(matchesFilter(filter, { metadata: { tier: 'silver' } }), false);
  });
});
