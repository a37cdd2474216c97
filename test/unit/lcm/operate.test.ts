// OPERATE's request checks and the change it makes (lib/sol/requests.ts operateVnfRequest,
// lib/lcm/operate.ts): SOL003 5.5.2.10's rules on stopType and gracefulStopTimeout, the VNFCs named
// by vnfcInfo or vnfcResourceInfo id (422 for one the instance does not have), the VNF's state from
// its VNFCs', the reverse of a failed OPERATE, and resourceChanges with MODIFIED VNFCs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import { operateVnfRequest } from '#lib/sol/requests.ts';
import { operateChange, operateChanges, reverseOperate, vnfcStates, vnfStateOf } from '#lib/lcm/operate.ts';
import { operateRefusal } from '#lib/vim/kubernetes/operate.ts';

const vnfc = (id: string, vduId: string, workload?: string, kind = 'OS::Nova::Server') => ({
  id,
  vduId,
  computeResource: { resourceId: id, vimLevelResourceType: kind },
  ...(workload ? { metadata: { workload } } : {}),
});

const info = (states: Record<string, string> = {}) => ({
  vnfcResourceInfo: [vnfc('server-a', 'VDU1'), vnfc('server-b', 'VDU2')],
  vnfcInfo: [
    { id: 'VDU1-server-a', vduId: 'VDU1', vnfcResourceInfoId: 'server-a', vnfcState: states['server-a'] ?? 'STARTED' },
    { id: 'VDU2-server-b', vduId: 'VDU2', vnfcResourceInfoId: 'server-b', vnfcState: states['server-b'] ?? 'STARTED' },
  ],
});

describe('OperateVnfRequest', () => {
  const accepted = [
    { changeStateTo: 'STARTED' },
    { changeStateTo: 'STOPPED' },
    { changeStateTo: 'STOPPED', stopType: 'FORCEFUL' },
    { changeStateTo: 'STOPPED', stopType: 'GRACEFUL', gracefulStopTimeout: 0 },
    { changeStateTo: 'STOPPED', stopType: 'GRACEFUL', gracefulStopTimeout: 120, additionalParams: { drain: true } },
    { changeStateTo: 'STARTED', vnfcInstanceId: ['VDU1-server-a'] },
  ];
  for (const body of accepted) {
    it(`accepts ${JSON.stringify(body)}`, () => {
      assert.ok(operateVnfRequest.safeParse(body).success);
    });
  }

  const refused: Array<[unknown, string]> = [
    [{}, 'changeStateTo'],
    [{ changeStateTo: 'PAUSED' }, 'changeStateTo'],
    [{ changeStateTo: 'STARTED', stopType: 'FORCEFUL' }, 'stopType'],
    [{ changeStateTo: 'STARTED', stopType: 'GRACEFUL', gracefulStopTimeout: 5 }, 'stopType'],
    [{ changeStateTo: 'STARTED', gracefulStopTimeout: 5 }, 'gracefulStopTimeout'],
    [{ changeStateTo: 'STOPPED', stopType: 'GRACEFUL' }, 'gracefulStopTimeout'],
    [{ changeStateTo: 'STOPPED', stopType: 'FORCEFUL', gracefulStopTimeout: 5 }, 'gracefulStopTimeout'],
    [{ changeStateTo: 'STOPPED', gracefulStopTimeout: 5 }, 'gracefulStopTimeout'],
    [{ changeStateTo: 'STOPPED', stopType: 'GRACEFUL', gracefulStopTimeout: -1 }, 'gracefulStopTimeout'],
    [{ changeStateTo: 'STOPPED', stopType: 'GRACEFUL', gracefulStopTimeout: 1.5 }, 'gracefulStopTimeout'],
    [{ changeStateTo: 'STOPPED', stopType: 'SOFT' }, 'stopType'],
    [{ changeStateTo: 'STOPPED', vnfcInstanceId: [] }, 'vnfcInstanceId'],
    [{ changeStateTo: 'STOPPED', vnfcInstanceId: [''] }, 'vnfcInstanceId'],
    [{ changeStateTo: 'STOPPED', vnfcInstanceIds: ['x'] }, ''],
  ];
  for (const [body, path] of refused) {
    it(`refuses ${JSON.stringify(body)}, naming ${path || 'the unknown attribute'}`, () => {
      const parsed = operateVnfRequest.safeParse(body);
      assert.equal(parsed.success, false);
      if (path)
        assert.ok(
          parsed.error?.issues.some((issue) => issue.path[0] === path),
          JSON.stringify(parsed.error?.issues),
        );
    });
  }
});

describe('the change an OPERATE makes', () => {
  it('names every VNFC when the request names none; a stop without stopType is FORCEFUL', () => {
    assert.deepEqual(operateChange(info(), { changeStateTo: 'STOPPED' }), {
      kind: 'OPERATE',
      changeStateTo: 'STOPPED',
      stopType: 'FORCEFUL',
      vnfcs: [
        { vduId: 'VDU1', resourceId: 'server-a' },
        { vduId: 'VDU2', resourceId: 'server-b' },
      ],
    });
  });

  it('takes vnfcInfo ids and vnfcResourceInfo ids, each VNFC once', () => {
    const change = operateChange(info(), {
      changeStateTo: 'STOPPED',
      stopType: 'GRACEFUL',
      gracefulStopTimeout: 30,
      vnfcInstanceId: ['VDU2-server-b', 'server-b'],
    });
    assert.deepEqual(change, {
      kind: 'OPERATE',
      changeStateTo: 'STOPPED',
      stopType: 'GRACEFUL',
      gracefulStopTimeout: 30,
      vnfcs: [{ vduId: 'VDU2', resourceId: 'server-b' }],
    });
    assert.equal(operateChange(info(), { changeStateTo: 'STARTED', vnfcInstanceId: ['server-a'] }).stopType, undefined);
  });

  it('refuses (422) a VNFC the instance does not have, naming it', () => {
    assert.throws(
      () => operateChange(info(), { changeStateTo: 'STOPPED', vnfcInstanceId: ['VDU1-server-a', 'ghost'] }),
      (error: unknown) => error instanceof UnprocessableEntityError && /ghost/.test(error.message) && !/server-a/.test(error.message),
    );
  });
});

describe("the VNF's and VNFCs' states", () => {
  it('reads each VNFC state from vnfcInfo; a VNFC without one is STARTED', () => {
    assert.deepEqual(
      [...vnfcStates({ vnfcResourceInfo: [vnfc('a', 'VDU1'), vnfc('b', 'VDU1')], vnfcInfo: [{ vnfcResourceInfoId: 'b', vnfcState: 'STOPPED' }] })],
      [
        ['a', 'STARTED'],
        ['b', 'STOPPED'],
      ],
    );
  });

  it('is STOPPED only when every VNFC is stopped, and says nothing without VNFCs', () => {
    assert.equal(vnfStateOf(info({ 'server-a': 'STOPPED' }).vnfcInfo), 'STARTED');
    assert.equal(vnfStateOf(info({ 'server-a': 'STOPPED', 'server-b': 'STOPPED' }).vnfcInfo), 'STOPPED');
    assert.equal(vnfStateOf(info().vnfcInfo), 'STARTED');
    assert.equal(vnfStateOf([]), undefined);
    assert.equal(vnfStateOf(undefined), undefined);
  });
});

describe('rollback of an OPERATE', () => {
  it('starts again what a failed stop may have stopped, and only the VNFCs that were running', () => {
    const before = info({ 'server-b': 'STOPPED' });
    const change = operateChange(before, { changeStateTo: 'STOPPED', stopType: 'GRACEFUL', gracefulStopTimeout: 10 });
    assert.deepEqual(reverseOperate(change, before), { kind: 'OPERATE', changeStateTo: 'STARTED', vnfcs: [{ vduId: 'VDU1', resourceId: 'server-a' }] });
  });

  it('stops again (FORCEFUL) what a failed start may have started', () => {
    const before = info({ 'server-a': 'STOPPED', 'server-b': 'STOPPED' });
    const change = operateChange(before, { changeStateTo: 'STARTED' });
    assert.deepEqual(reverseOperate(change, before), { kind: 'OPERATE', changeStateTo: 'STOPPED', stopType: 'FORCEFUL', vnfcs: change.vnfcs });
  });

  it('has nothing to do when every VNFC named was already in the wanted state', () => {
    const before = info({ 'server-a': 'STOPPED' });
    assert.equal(reverseOperate(operateChange(before, { changeStateTo: 'STOPPED', vnfcInstanceId: ['server-a'] }), before), undefined);
  });
});

describe('resourceChanges of an OPERATE', () => {
  it('adds the VNFCs whose state changed as MODIFIED, keeping what the resource diff found', () => {
    const before = { ...info(), vnfcResourceInfo: [...info().vnfcResourceInfo, vnfc('pod-old', 'VDU3')] };
    const after = info({ 'server-a': 'STOPPED' });
    const diff = { affectedVnfcs: [{ id: 'pod-old', vduId: 'VDU3', changeType: 'REMOVED' }], affectedVirtualLinks: [], affectedVirtualStorages: [] };
    assert.deepEqual(operateChanges(diff, before, after), {
      affectedVnfcs: [
        { id: 'pod-old', vduId: 'VDU3', changeType: 'REMOVED' },
        { id: 'server-a', vduId: 'VDU1', changeType: 'MODIFIED', computeResource: { resourceId: 'server-a', vimLevelResourceType: 'OS::Nova::Server' } },
      ],
      affectedVirtualLinks: [],
      affectedVirtualStorages: [],
    });
  });
});

describe('which VNFCs a Kubernetes VIM can start or stop', () => {
  const pods = [
    vnfc('vdu1-a', 'VDU1', 'Deployment/vdu1', 'Deployment'),
    vnfc('vdu1-b', 'VDU1', 'Deployment/vdu1', 'Deployment'),
    vnfc('vdu2', 'VDU2', 'Pod/vdu2', 'Pod'),
    vnfc('agent-x', 'VDU3', 'DaemonSet/agent', 'DaemonSet'),
  ];
  const change = (...ids: string[]) =>
    ({
      kind: 'OPERATE',
      changeStateTo: 'STOPPED',
      vnfcs: ids.map((id) => ({ vduId: pods.find((pod) => pod.id === id)?.vduId ?? '', resourceId: id })),
    }) as const;

  it('refuses one pod of a multi-replica workload, naming the others', () => {
    const refusal = operateRefusal(pods, change('vdu1-a'));
    assert.match(refusal ?? '', /1 of the 2 pods of Deployment\/vdu1/);
    assert.match(refusal ?? '', /vdu1-b/);
  });

  it('accepts whole workloads and bare Pods', () => {
    assert.equal(operateRefusal(pods, change('vdu1-a', 'vdu1-b')), undefined);
    assert.equal(operateRefusal(pods, change('vdu2')), undefined);
    assert.equal(operateRefusal(pods, change('vdu1-b', 'vdu1-a', 'vdu2')), undefined);
  });

  it('refuses the pods of a workload without a replica count', () => {
    assert.match(operateRefusal(pods, change('agent-x')) ?? '', /a DaemonSet has no replica count/);
  });
});
