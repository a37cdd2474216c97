// CHANGE_EXT_CONN worked out without a VIM: the request body (v2 and v1 shapes), the CPs it may
// name, the external VLs afterwards, what changes, and what the op occ and the grant report.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FlavourInfo, ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { VnfInstanceRecord, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import { grantFor } from '#lib/lcm/grant.ts';
import { assertEtsiSchema } from '../../support/etsi.ts';
import { BadRequestError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import { changeExtVnfConnectivityRequest, normaliseV1Instantiate, parseRequest } from '#lib/sol/requests.ts';
import {
  changedExtConnectivity,
  checkExtVirtualLinks,
  checkLinkConnections,
  extConnPlan,
  extConnResourceChanges,
  externalCpdIds,
  grantUpdateResources,
  mergeExtVirtualLinks,
  type ExtVirtualLink,
} from '#lib/lcm/ext-conn.ts';

const flavour = {
  flavourId: 'simple',
  vdus: [],
  storages: [],
  cps: [
    { id: 'VDU1_CP1', vdu: 'VDU1' },
    { id: 'VDU1_CP2', vdu: 'VDU1', virtualLink: 'internalVL1' },
    { id: 'VDU2_CP1', vdu: 'VDU2' },
  ],
  extCps: [{ id: 'VNF_EXT_CP' }],
  externalCps: ['VDU1_CP1'],
  virtualLinks: [{ id: 'internalVL1' }],
} as unknown as FlavourInfo;

const cp = (cpdId: string, address?: string) => ({
  cpdId,
  cpConfig: {
    [`${cpdId}_1`]: {
      cpProtocolData: [
        { layerProtocol: 'IP_OVER_ETHERNET', ...(address ? { ipOverEthernet: { ipAddresses: [{ type: 'IPV4', fixedAddresses: [address] }] } } : {}) },
      ],
    },
  },
});
const link = (id: string, resourceId: string, ...extCps: ReturnType<typeof cp>[]): ExtVirtualLink => ({ id, resourceId, extCps });

function throwsWith(fn: () => unknown, type: typeof BadRequestError | typeof UnprocessableEntityError, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => error instanceof type && pattern.test((error as Error).message));
}

describe('ChangeExtVnfConnectivityRequest', () => {
  const parse = (body: unknown) => parseRequest(changeExtVnfConnectivityRequest, body, 'ChangeExtVnfConnectivityRequest');

  it('takes external VLs, VIM connections and additionalParams', () => {
    const request = parse({
      extVirtualLinks: [link('ext', 'net', cp('VDU1_CP1'))],
      vimConnectionInfo: { vim1: { vimId: 'v', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3' } },
      additionalParams: { a: 1 },
    });
    assert.equal(request.extVirtualLinks[0]?.resourceId, 'net');
  });

  it('needs at least one external VL, each with an id and a resourceId, and nothing the spec does not define', () => {
    throwsWith(() => parse({}), BadRequestError, /extVirtualLinks/);
    throwsWith(() => parse({ extVirtualLinks: [] }), BadRequestError, /extVirtualLinks: at least one external virtual link is required/);
    throwsWith(() => parse({ extVirtualLinks: [{ id: 'ext', extCps: [] }] }), BadRequestError, /extVirtualLinks\.0\.resourceId/);
    throwsWith(() => parse({ extVirtualLinks: [link('ext', 'net', cp('VDU1_CP1'))], flavourId: 'x' }), BadRequestError, /unknown attribute\(s\) "flavourId"/);
    throwsWith(
      () => parse({ extVirtualLinks: [link('ext', 'net', cp('VDU1_CP1'))], vimConnectionInfo: { vim1: { vimId: 'v' } } }),
      BadRequestError,
      /vimConnectionInfo\.vim1\.vimType/,
    );
  });

  it('checks each CP configuration: a port or protocol data, and exactly one way of addressing', () => {
    const withConfig = (config: unknown) => ({
      extVirtualLinks: [{ id: 'ext', resourceId: 'net', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { c1: config } }] }],
    });
    const ip = (address: Record<string, unknown>) =>
      withConfig({ cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [address] } }] });
    parse(ip({ type: 'IPV4', fixedAddresses: ['10.0.0.5'], subnetId: 'sub' }));
    parse(ip({ type: 'IPV6', numDynamicAddresses: 1 }));
    throwsWith(() => parse(withConfig({})), BadRequestError, /cpConfig\.c1: give linkPortId or cpProtocolData/);
    throwsWith(() => parse(ip({ type: 'IPV4' })), BadRequestError, /give exactly one of fixedAddresses, numDynamicAddresses and addressRange/);
    throwsWith(() => parse(ip({ type: 'IPV4', fixedAddresses: ['10.0.0.5'], numDynamicAddresses: 1 })), BadRequestError, /exactly one/);
    throwsWith(() => parse(ip({ type: 'IPV5', numDynamicAddresses: 1 })), BadRequestError, /ipAddresses\.0\.type/);
    throwsWith(() => parse(withConfig({ cpProtocolData: [{ layerProtocol: 'ETHERNET' }] })), BadRequestError, /layerProtocol/);
    throwsWith(() => parse({ extVirtualLinks: [{ id: 'ext', resourceId: 'net' }] }), BadRequestError, /extVirtualLinks\.0\.extCps/);
  });

  it('reads v1 bodies: vimConnectionInfo and cpConfig as arrays', () => {
    const request = parse(
      normaliseV1Instantiate({
        extVirtualLinks: [
          { id: 'ext', resourceId: 'net', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: [{ cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] }] }] },
        ],
        vimConnectionInfo: [{ id: 'vim1', vimId: 'v', vimType: 'openstack' }],
      }),
    );
    assert.deepEqual(request.extVirtualLinks[0]?.extCps[0]?.cpConfig, { 'VDU1_CP1-0': { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } });
    assert.deepEqual(request.vimConnectionInfo, { vim1: { vimId: 'v', vimType: 'openstack' } });
  });
});

describe('the CPs a change may name', () => {
  it("are the flavour's external CPs: exposed by substitution_mappings, VnfExtCps, and VduCps on no internal VL", () => {
    assert.deepEqual(externalCpdIds(flavour).sort(), ['VDU1_CP1', 'VDU2_CP1', 'VNF_EXT_CP']);
  });

  it('accepts external CPs and refuses an unknown or internal one with 422 naming the external CPs', () => {
    checkExtVirtualLinks(flavour, [link('a', 'net-a', cp('VDU1_CP1')), link('b', 'net-b', cp('VDU2_CP1'))]);
    throwsWith(
      () => checkExtVirtualLinks(flavour, [link('a', 'net-a', cp('NOPE'))]),
      UnprocessableEntityError,
      /names "NOPE", which is not an external CP of deployment flavour simple; its external CPs are VDU1_CP1, VNF_EXT_CP, VDU2_CP1/,
    );
    throwsWith(
      () => checkExtVirtualLinks(flavour, [link('a', 'net-a', cp('VDU1_CP2'), cp('NOPE'))]),
      UnprocessableEntityError,
      /"VDU1_CP2", "NOPE", which are not/,
    );
  });

  it('refuses link ports made by the NFVO with 422: the VNFM creates the ports of external CPs', () => {
    throwsWith(
      () => checkExtVirtualLinks(flavour, [{ ...link('a', 'n', cp('VDU1_CP1')), extLinkPorts: [{ id: 'p' }] }]),
      UnprocessableEntityError,
      /externally created link ports .* are not supported/,
    );
    throwsWith(
      () => checkExtVirtualLinks(flavour, [{ id: 'a', resourceId: 'n', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { c: { linkPortId: 'port-1' } } }] }]),
      UnprocessableEntityError,
      /not supported/,
    );
  });

  it("takes external VLs on the VNF's VIM, and refuses one naming an unknown connection or another VIM with 422", () => {
    const vnfVim = { connectionId: 'vim0', vimId: 'cloud-1' };
    const on = (vimConnectionId: string) => [{ ...link('a', 'n', cp('VDU1_CP1')), vimConnectionId }];
    const connections = { vim0: { vimId: 'cloud-1' }, same: { vimId: 'cloud-1' }, direct: {}, other: { vimId: 'cloud-2' } };
    for (const id of ['vim0', 'same', 'direct']) checkLinkConnections(on(id), connections, vnfVim);
    checkLinkConnections([link('a', 'n', cp('VDU1_CP1'))], connections, vnfVim);
    throwsWith(
      () => checkLinkConnections(on('nope'), connections, vnfVim),
      UnprocessableEntityError,
      /"nope", which neither the VNF instance nor the request has/,
    );
    throwsWith(
      () => checkLinkConnections(on('other'), connections, vnfVim),
      UnprocessableEntityError,
      /on VIM cloud-2, but the VNF's ports are on VIM cloud-1/,
    );
  });

  it('refuses a VL named twice, a CP named twice and a VL naming no CP with 400', () => {
    throwsWith(() => checkExtVirtualLinks(flavour, [link('a', 'n', cp('VDU1_CP1')), link('a', 'm', cp('VDU2_CP1'))]), BadRequestError, /"a" twice/);
    throwsWith(
      () => checkExtVirtualLinks(flavour, [link('a', 'n', cp('VDU1_CP1')), link('b', 'm', cp('VDU1_CP1'))]),
      BadRequestError,
      /VDU1_CP1 is named twice \(in "a" and "b"\)/,
    );
    throwsWith(() => checkExtVirtualLinks(flavour, [link('a', 'n', cp('VDU1_CP1'), cp('VDU1_CP1'))]), BadRequestError, /in external virtual link "a"/);
    throwsWith(() => checkExtVirtualLinks(flavour, [link('a', 'n')]), BadRequestError, /names no external CP/);
  });
});

describe('the external VLs after a change', () => {
  const current = [link('pub', 'public', cp('VDU1_CP1'), cp('VDU2_CP1')), link('mgmt', 'mgmt-net', cp('VNF_EXT_CP'))];

  it('moves a CP named on a new VL off its old one, keeping the VLs and CPs the request does not name', () => {
    const merged = mergeExtVirtualLinks(current, [link('a', 'net-a', cp('VDU1_CP1', '10.0.0.5'))]);
    assert.deepEqual(merged, [
      link('pub', 'public', cp('VDU2_CP1')),
      link('mgmt', 'mgmt-net', cp('VNF_EXT_CP')),
      link('a', 'net-a', cp('VDU1_CP1', '10.0.0.5')),
    ]);
  });

  it('replaces a VL named by its id, in its place, keeping its CPs the request does not move', () => {
    const merged = mergeExtVirtualLinks(current, [link('pub', 'public-2', cp('VDU1_CP1', '10.0.0.5'))]);
    assert.deepEqual(merged, [link('pub', 'public-2', cp('VDU1_CP1', '10.0.0.5'), cp('VDU2_CP1')), link('mgmt', 'mgmt-net', cp('VNF_EXT_CP'))]);
  });

  it('drops a VL left with no CP', () => {
    const merged = mergeExtVirtualLinks(current, [link('a', 'net-a', cp('VNF_EXT_CP'))]);
    assert.deepEqual(
      merged.map((l) => l.id),
      ['pub', 'a'],
    );
  });

  it('plans the CPs and VLs whose connectivity changes, and keeps what the instance had for a rollback', () => {
    const moved = extConnPlan(current, [link('a', 'net-a', cp('VDU1_CP1'))]);
    assert.deepEqual(moved.cpdIds, ['VDU1_CP1']);
    assert.deepEqual(moved.linkIds, ['pub', 'a']);
    assert.deepEqual(moved.previous, current);
    // The VL itself moves: every CP on it changes.
    const renetworked = extConnPlan(current, [link('pub', 'public-2', cp('VDU1_CP1'))]);
    assert.deepEqual(renetworked.cpdIds.sort(), ['VDU1_CP1', 'VDU2_CP1']);
    assert.deepEqual(renetworked.linkIds, ['pub']);
    // A new address only.
    const readdressed = extConnPlan(current, [link('pub', 'public', cp('VDU1_CP1', '172.24.4.9'))]);
    assert.deepEqual(readdressed.cpdIds, ['VDU1_CP1']);
    // The same again: nothing changes.
    const same = extConnPlan(current, [link('mgmt', 'mgmt-net', cp('VNF_EXT_CP'))]);
    assert.deepEqual([same.cpdIds, same.linkIds], [[], []]);
  });
});

describe('what the op occ and the grant report', () => {
  const vnfc = (id: string, vduId: string, cps: string[]) => ({
    id,
    vduId,
    computeResource: { resourceId: id, vimLevelResourceType: 'OS::Nova::Server' },
    vnfcCpInfo: cps.map((cpdId) => ({ id: `${cpdId}-${id}`, cpdId })),
  });
  const before = {
    vnfcResourceInfo: [vnfc('s1', 'VDU1', ['VDU1_CP1', 'VDU1_CP2']), vnfc('s2', 'VDU2', ['VDU2_CP2'])],
    extCpInfo: [{ id: 'cp-p1', cpdId: 'VDU1_CP1', extLinkPortId: 'p1' }],
    extVirtualLinkInfo: [
      { id: 'pub', resourceHandle: { resourceId: 'public' }, extLinkPorts: [{ id: 'p1', resourceHandle: { resourceId: 'p1' }, cpInstanceId: 'cp-p1' }] },
    ],
  };
  const after = {
    vnfcResourceInfo: before.vnfcResourceInfo,
    extCpInfo: [{ id: 'cp-p2', cpdId: 'VDU1_CP1', extLinkPortId: 'p2' }],
    extVirtualLinkInfo: [
      { id: 'a', resourceHandle: { resourceId: 'net-a' }, extLinkPorts: [{ id: 'p2', resourceHandle: { resourceId: 'p2' }, cpInstanceId: 'cp-p2' }] },
    ],
  };
  const collected = {
    vnfcResourceInfo: after.vnfcResourceInfo,
    vnfVirtualLinkResourceInfo: [],
    virtualStorageResourceInfo: [],
    extCpInfo: after.extCpInfo,
  };

  it('grants an update of the VNFCs whose CPs are reconnected, nothing added or removed', () => {
    assert.deepEqual(grantUpdateResources(before, ['VDU1_CP1'], 'vim1'), [
      {
        id: 'VDU1-s1',
        type: 'COMPUTE',
        vduId: 'VDU1',
        resourceTemplateId: 'VDU1',
        resource: { vimConnectionId: 'vim1', resourceId: 's1', vimLevelResourceType: 'OS::Nova::Server' },
      },
    ]);
    assert.deepEqual(grantUpdateResources(before, []), []);
  });

  it('asks the grant for CHANGE_EXT_CONN with those VNFCs as updateResources: a valid SOL003 GrantRequest', async () => {
    const plan = extConnPlan([link('pub', 'public', cp('VDU1_CP1'))], [link('a', 'net-a', cp('VDU1_CP1'))]);
    const { grantRequest } = await grantFor({ newId: () => 'grant-1' } as unknown as CoreDeps, {
      opOcc: { id: 'occ-1', operation: 'CHANGE_EXT_CONN', isAutomaticInvocation: false, change: plan } as unknown as VnfLcmOpOccRecord,
      instance: {
        id: 'vnf-1',
        vnfdId: 'vnfd-1',
        instantiatedVnfInfo: { flavourId: 'simple', ...before },
        vimResources: { vim: { connectionId: 'vim1' } },
      } as unknown as VnfInstanceRecord,
      vnfd: { flavours: [flavour] } as unknown as ParsedVnfd,
    });
    assert.equal(grantRequest.operation, 'CHANGE_EXT_CONN');
    assert.deepEqual(
      (grantRequest.updateResources as Array<{ id: string }>).map((resource) => resource.id),
      ['VDU1-s1'],
    );
    assert.equal(grantRequest.addResources, undefined);
    assert.equal(grantRequest.removeResources, undefined);
    await assertEtsiSchema('grant', 'GrantRequest', grantRequest);
  });

  it('reports the reconnected VNFCs as MODIFIED naming just those CPs, and the external link ports added and removed', () => {
    const changes = extConnResourceChanges(before, after, collected, { cpdIds: ['VDU1_CP1'] });
    assert.deepEqual(changes.affectedVnfcs, [
      { id: 's1', vduId: 'VDU1', changeType: 'MODIFIED', computeResource: before.vnfcResourceInfo[0]?.computeResource, affectedVnfcCpIds: ['VDU1_CP1-s1'] },
    ]);
    assert.deepEqual(changes.affectedExtLinkPorts, [
      { id: 'p2', changeType: 'ADDED', extCpInstanceId: 'cp-p2', resourceHandle: { resourceId: 'p2' } },
      { id: 'p1', changeType: 'REMOVED', extCpInstanceId: 'cp-p1', resourceHandle: { resourceId: 'p1' } },
    ]);
  });

  it('reports a port kept with new addresses as MODIFIED', () => {
    const readdressed = { ...before, extVirtualLinkInfo: [{ ...before.extVirtualLinkInfo[0], resourceHandle: { resourceId: 'public' } }] };
    const changes = extConnResourceChanges(before, readdressed, { ...collected, extCpInfo: before.extCpInfo }, { cpdIds: ['VDU1_CP1'] });
    assert.deepEqual(changes.affectedExtLinkPorts, [{ id: 'p1', changeType: 'MODIFIED', extCpInstanceId: 'cp-p1', resourceHandle: { resourceId: 'p1' } }]);
    assert.deepEqual(extConnResourceChanges(before, readdressed, { ...collected, extCpInfo: before.extCpInfo }, { cpdIds: [] }).affectedExtLinkPorts, []);
  });

  it('reports as changedExtConnectivity the ExtVirtualLinkInfo of the VLs made or changed', () => {
    assert.deepEqual(changedExtConnectivity(after, { linkIds: ['pub', 'a'] }), after.extVirtualLinkInfo);
    assert.deepEqual(changedExtConnectivity(after, { linkIds: ['pub'] }), []);
  });
});
