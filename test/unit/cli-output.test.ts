// The CLI's output formats: tables for people, the API's representation unchanged in json and the
// same data in yaml, and the progress lines and failure messages an LCM command prints.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { cell, elapsed, parseFormat, renderItem, renderList, type Column } from '../../cli/output.ts';
import { nextCommands, operationFailure, progressLines, type OpOcc } from '../../cli/wait.ts';

type Row = { id: string; state: string; vnfcs?: unknown[]; nested?: Record<string, unknown> };
const rows: Row[] = [
  { id: 'a1', state: 'INSTANTIATED', vnfcs: [1, 2, 3], nested: { deep: { x: 1 } } },
  { id: 'b2', state: 'NOT_INSTANTIATED' },
];
const columns: Column<Row>[] = [
  { header: 'ID', value: (row) => row.id },
  { header: 'State', value: (row) => row.state },
  { header: 'VNFCs', value: (row) => row.vnfcs?.length },
];

describe('renderList', () => {
  it('prints a table with the chosen columns, one row per item, in order', () => {
    const lines = renderList(rows, columns, 'table').trimEnd().split('\n');
    assert.match(lines[1] ?? '', /ID\s*│\s*State\s*│\s*VNFCs/);
    const body = lines.filter((line) => /a1|b2/.test(line));
    assert.equal(body.length, 2);
    assert.match(body[0] ?? '', /a1\s*│\s*INSTANTIATED\s*│\s*3/);
    assert.match(body[1] ?? '', /b2\s*│\s*NOT_INSTANTIATED\s*│\s*│/);
    assert.ok(!renderList(rows, columns, 'table').includes('\x1b['), 'no colour codes');
  });

  it('prints only the header for an empty list', () => {
    const table = renderList([], columns, 'table');
    assert.match(table, /ID/);
    assert.equal(table.trimEnd().split('\n').length, 3);
  });

  it('prints json as the API gave it: every attribute, not just the columns', () => {
    assert.deepEqual(JSON.parse(renderList(rows, columns, 'json')), rows);
    assert.equal(renderList([], columns, 'json').trim(), '[]');
  });

  it('prints yaml holding the same data', () => {
    assert.deepEqual(parse(renderList(rows, columns, 'yaml')), rows);
  });
});

describe('renderItem', () => {
  const item = { id: 'a1', count: 2, enabled: false, tags: ['x', 'y'], nested: { a: { b: 'c' } }, _links: { self: { href: 'http://x' } } };

  it('prints a field/value table of every attribute but _links, nested ones as YAML', () => {
    const table = renderItem(item, 'table');
    assert.match(table, /id\s*│\s*a1/);
    assert.match(table, /count\s*│\s*2/);
    assert.match(table, /enabled\s*│\s*false/);
    assert.match(table, /tags\s*│\s*x, y/);
    assert.match(table, /nested\s*│\s*a:/);
    assert.match(table, /│\s*b: c/);
    assert.ok(!table.includes('_links'));
  });

  it('prints json and yaml unchanged, _links included', () => {
    assert.deepEqual(JSON.parse(renderItem(item, 'json')), item);
    assert.deepEqual(parse(renderItem(item, 'yaml')), item);
  });
});

describe('cells and formats', () => {
  it('renders scalars, lists of scalars and structures', () => {
    assert.equal(cell(undefined), '');
    assert.equal(cell(null), '');
    assert.equal(cell(0), '0');
    assert.equal(cell(['a', 1]), 'a, 1');
    assert.equal(cell([{ a: 1 }]), '- a: 1');
  });

  it('knows table, json and yaml only', () => {
    assert.equal(parseFormat(undefined), 'table');
    assert.equal(parseFormat('yaml'), 'yaml');
    assert.throws(() => parseFormat('xml'), /Unknown output format "xml"/);
  });

  it('prints elapsed time in seconds, then minutes', () => {
    assert.equal(elapsed(400), '0.4s');
    assert.equal(elapsed(185_000), '3m05s');
  });
});

describe('LCM progress', () => {
  const occ = (state: string, changes?: OpOcc['resourceChanges']): OpOcc => ({
    id: 'op1',
    operation: 'SCALE',
    operationState: state,
    vnfInstanceId: 'vnf1',
    ...(changes ? { resourceChanges: changes } : {}),
  });

  it('prints a state once, and each resource change once as it appears', () => {
    const seen = new Set<string>();
    assert.deepEqual(progressLines(occ('PROCESSING'), seen, 'STARTING', '0.5s'), ['[0.5s] SCALE PROCESSING']);
    assert.deepEqual(progressLines(occ('PROCESSING'), seen, 'PROCESSING', '0.9s'), []);
    const changes = {
      affectedVnfcs: [
        { id: 'c1', vduId: 'VDU1', changeType: 'ADDED', computeResource: { resourceId: 'server-1' } },
        { id: 'c0', vduId: 'VDU1', changeType: 'REMOVED', computeResource: { resourceId: 'c0' } },
      ],
      affectedVirtualStorages: [{ id: 's1', virtualStorageDescId: 'Disk', changeType: 'MODIFIED' }],
    };
    assert.deepEqual(progressLines(occ('COMPLETED', changes), seen, 'PROCESSING', '2.0s'), [
      '[2.0s] SCALE COMPLETED',
      '[2.0s]   + VNFC VDU1 c1 (server-1) ADDED',
      '[2.0s]   - VNFC VDU1 c0 REMOVED',
      '[2.0s]   ~ storage Disk s1 MODIFIED',
    ]);
    assert.deepEqual(progressLines(occ('COMPLETED', changes), seen, 'COMPLETED', '2.5s'), []);
  });

  it('names the next commands for FAILED_TEMP, without rollback for TERMINATE and HEAL', () => {
    assert.deepEqual(nextCommands(occ('FAILED_TEMP')), ['vnfm op retry op1', 'vnfm op rollback op1', 'vnfm op fail op1']);
    assert.deepEqual(nextCommands({ id: 'op2', operation: 'TERMINATE', operationState: 'FAILED_TEMP' }), ['vnfm op retry op2', 'vnfm op fail op2']);
    assert.deepEqual(nextCommands(occ('FAILED')), []);
  });

  it("ends a failed operation with the op occ's error and what to run next", () => {
    const failure = operationFailure({ ...occ('FAILED_TEMP'), error: { status: 500, title: 'VimOperationFailed', detail: 'stack failed' } });
    assert.equal(failure.exitCode, 1);
    assert.equal(
      failure.message,
      'SCALE op1 ended FAILED_TEMP\nError 500: VimOperationFailed: stack failed\nNext: vnfm op retry op1  |  vnfm op rollback op1  |  vnfm op fail op1',
    );
  });
});
