// The OpenStack driver's pure parts on the sample package openstack-vnf-v1: BaseHOT loading, the
// Tacker-style `nfv` parameter, and Heat resources (with an AutoScalingGroup) turned into SOL003
// instantiatedVnfInfo parts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openArchive, type CsarArchive } from '#lib/packages/archive.ts';
import { bufferSource } from '#lib/packages/byte-source.ts';
import { inspectCsar } from '#lib/packages/csar.ts';
import type { FlavourInfo, ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import { parseVnfd } from '#lib/packages/vnfd/parse.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { PackageFiles } from '#lib/vim/driver.ts';
import type { HeatResource } from '#lib/vim/openstack/heat.ts';
import { resourceStackId } from '#lib/vim/openstack/heat.ts';
import { buildNfv, capacitiesOf, desiredCapacity, fixedIpsOf, flavourOf, loadBaseHot, nfvParamPaths, parseTemplate } from '#lib/vim/openstack/hot.ts';
import { collectResources } from '#lib/vim/openstack/resources.ts';
import { scaleChoices } from '#lib/vim/openstack/state.ts';
import { serviceMessage } from '#lib/vim/openstack/errors.ts';
import { buildCsar } from '../../support/csar-builder.ts';

async function openSample(): Promise<{ archive: CsarArchive; vnfd: ParsedVnfd; files: PackageFiles }> {
  const archive = await openArchive(bufferSource(await buildCsar('openstack-vnf-v1')));
  const info = await inspectCsar(archive);
  const vnfd = await parseVnfd({ readText: (path) => archive.readText(path), has: (path) => archive.has(path) }, info.entryDefinitions);
  const entry = (path: string) => {
    const found = archive.entries().find((candidate) => candidate.path === path && !candidate.isDirectory);
    if (!found) throw new Error(`${path} is not in the package`);
    return found;
  };
  const files: PackageFiles = {
    read: async (path) => archive.readBytes(path, entry(path).uncompressedSize),
    size: async (path) => entry(path).uncompressedSize,
    stream: (path) => archive.openStream(path),
    list: async () =>
      archive
        .entries()
        .filter((candidate) => !candidate.isDirectory)
        .map((candidate) => candidate.path),
    artifacts: async () => [],
  };
  return { archive, vnfd, files };
}

/** Package files of a plain map, for BaseHOT layouts the sample does not have. */
function memoryFiles(entries: Record<string, string>): PackageFiles {
  const get = (path: string): Buffer => {
    if (!Object.hasOwn(entries, path)) throw new Error(`${path} is not in the package`);
    return Buffer.from(entries[path] as string);
  };
  return {
    read: async (path) => get(path),
    size: async (path) => get(path).length,
    stream: async () => {
      throw new Error('not used');
    },
    list: async () => Object.keys(entries),
    artifacts: async () => [],
  };
}

const EXT_VL_REQUEST = {
  flavourId: 'simple',
  extVirtualLinks: [
    {
      id: 'ext-vl-1',
      resourceId: 'net-public',
      extCps: [
        {
          cpdId: 'VDU1_CP1',
          cpConfig: {
            'VDU1_CP1-config': {
              cpProtocolData: [
                {
                  layerProtocol: 'IP_OVER_ETHERNET',
                  ipOverEthernet: { ipAddresses: [{ type: 'IPV4', fixedAddresses: ['10.0.0.10'], subnetId: 'subnet-public' }] },
                },
              ],
            },
          },
        },
      ],
    },
  ],
};

let sample: Awaited<ReturnType<typeof openSample>>;
let flavour: FlavourInfo;
before(async () => {
  sample = await openSample();
  flavour = flavourOf(sample.vnfd, 'simple');
});
after(async () => {
  await sample.archive.close();
});

describe('BaseHOT of a flavour', () => {
  it('takes the one top template and the nested templates by base name', async () => {
    const hot = await loadBaseHot(sample.files, 'simple');
    assert.equal(hot.templatePath, 'BaseHOT/simple/sample_hot.yaml');
    assert.match(hot.template, /OS::Heat::AutoScalingGroup/);
    assert.deepEqual(Object.keys(hot.files), ['VDU1.yaml']);
    assert.match(hot.files['VDU1.yaml'] ?? '', /OS::Nova::Server/);
  });

  it('refuses a flavour without a BaseHOT and one with two top templates', async () => {
    await assert.rejects(
      loadBaseHot(sample.files, 'other'),
      (error: unknown) => error instanceof UnprocessableEntityError && /no BaseHOT for flavour other/.test(error.message),
    );
    const two = memoryFiles({ 'BaseHOT/f/a.yaml': 'resources: {}', 'BaseHOT/f/b.yaml': 'resources: {}' });
    await assert.rejects(loadBaseHot(two, 'f'), /has 2 top-level templates in BaseHOT\/f\/ \(BaseHOT\/f\/a\.yaml, BaseHOT\/f\/b\.yaml\)/);
  });

  it('keys every file under nested/ by base name and refuses two of the same name', async () => {
    const nested = memoryFiles({
      'BaseHOT/f/top.yaml': 'resources: {}',
      'BaseHOT/f/nested/VDU1.yaml': 'a',
      'BaseHOT/f/nested/scripts/init.sh': 'b',
      'BaseHOT/g/nested/other.yaml': 'not this flavour',
    });
    assert.deepEqual((await loadBaseHot(nested, 'f')).files, { 'VDU1.yaml': 'a', 'init.sh': 'b' });
    const clash = memoryFiles({ 'BaseHOT/f/top.yaml': 'resources: {}', 'BaseHOT/f/nested/a/x.yaml': '1', 'BaseHOT/f/nested/b/x.yaml': '2' });
    await assert.rejects(loadBaseHot(clash, 'f'), /two files named x\.yaml/);
  });

  it('reports a top template that is not YAML with its path', () => {
    assert.throws(() => parseTemplate({ templatePath: 'BaseHOT/f/top.yaml', template: 'a: [1', files: {} }), /BaseHOT\/f\/top\.yaml/);
  });
});

describe('the nfv parameter', () => {
  it('lists the nfv paths the top template reads', async () => {
    const paths = nfvParamPaths(parseTemplate(await loadBaseHot(sample.files, 'simple')));
    assert.deepEqual(paths.map((path) => path.join('.')).sort(), [
      'CP.VDU1_CP1.network',
      'VDU.VDU1.computeFlavourId',
      'VDU.VDU1.desired_capacity',
      'VDU.VDU1.locationConstraints',
      'VDU.VDU1.vcImageId',
      'VDU.VDU2.computeFlavourId',
      'VDU.VDU2.locationConstraints',
      'VDU.VirtualStorage.vcImageId',
    ]);
  });

  it('gives flavours, images, capacities and networks as Tacker does', async () => {
    const template = parseTemplate(await loadBaseHot(sample.files, 'simple'));
    const nfv = buildNfv({ flavour, request: EXT_VL_REQUEST, grant: {}, images: { VDU1: 'img-1', VirtualStorage: 'img-1' }, template });
    assert.deepEqual(nfv, {
      VDU: {
        VDU1: { computeFlavourId: 'm1.tiny', desired_capacity: 1, locationConstraints: 'nova', vcImageId: 'img-1' },
        VDU2: { computeFlavourId: 'm1.tiny', desired_capacity: 1, locationConstraints: 'nova' },
        VirtualStorage: { vcImageId: 'img-1' },
      },
      CP: { VDU1_CP1: { network: 'net-public', fixed_ips: [{ ip_address: '10.0.0.10', subnet: 'subnet-public' }] } },
    });
  });

  it('prefers the grant, follows the instantiation level and merges additionalParams.nfv', async () => {
    const template = parseTemplate(await loadBaseHot(sample.files, 'simple'));
    const nfv = buildNfv({
      flavour,
      instantiationLevelId: 'instantiation_level_2',
      request: { ...EXT_VL_REQUEST, additionalParams: { nfv: { VDU: { VDU2: { computeFlavourId: 'm1.small', locationConstraints: null } } } } },
      grant: {
        flavours: { VDU1: 'flavour-from-grant' },
        zones: [
          { id: 'z', zoneId: 'zone-a' },
          { id: 'y', zoneId: 'zone-b' },
        ],
      },
      images: { VDU1: 'img-1' },
      template,
    }) as { VDU: Record<string, Record<string, unknown>> };
    assert.equal(nfv.VDU.VDU1?.computeFlavourId, 'flavour-from-grant');
    assert.equal(nfv.VDU.VDU1?.desired_capacity, 2);
    assert.equal(nfv.VDU.VDU1?.locationConstraints, 'zone-a', 'the first granted zone');
    assert.equal(nfv.VDU.VDU2?.computeFlavourId, 'm1.small');
    assert.equal(Object.hasOwn(nfv.VDU.VDU2 ?? {}, 'locationConstraints'), false, 'a null in the merge patch removes the key');
    assert.equal(nfv.VDU.VirtualStorage?.vcImageId, null, 'the template reads it, but no image was resolved for the storage');
  });

  it("keeps the capacities a scale set, over the level and additionalParams.nfv, and reads them back from Heat's text", async () => {
    const template = parseTemplate(await loadBaseHot(sample.files, 'simple'));
    const nfv = buildNfv({
      flavour,
      instantiationLevelId: 'instantiation_level_2',
      request: { additionalParams: { nfv: { VDU: { VDU1: { desired_capacity: 1 } } } } },
      grant: {},
      images: {},
      template,
      capacities: { VDU1: 3, Unknown: 9 },
    });
    assert.deepEqual(capacitiesOf(nfv), { VDU1: 3, VDU2: 1 }, 'a VDU the flavour lacks gets no entry');
    assert.deepEqual(capacitiesOf(JSON.stringify(nfv)), { VDU1: 3, VDU2: 1 }, 'Heat shows a json parameter as text');
    assert.deepEqual(capacitiesOf('not json'), {});
  });

  it("places VDUs in the VIM's default zone when the grant names none", async () => {
    const template = parseTemplate(await loadBaseHot(sample.files, 'simple'));
    const nfv = buildNfv({ flavour, request: {}, grant: {}, images: {}, template, defaultZone: 'az-1' }) as { VDU: Record<string, Record<string, unknown>> };
    assert.deepEqual([nfv.VDU.VDU1?.locationConstraints, nfv.VDU.VDU2?.locationConstraints], ['az-1', 'az-1']);
  });

  it('places each VDU in the zone the grant names for it, the others in its first zone', async () => {
    const template = parseTemplate(await loadBaseHot(sample.files, 'simple'));
    const zones = [
      { id: 'z', zoneId: 'zone-a' },
      { id: 'y', zoneId: 'zone-b' },
    ];
    const nfv = (vduZones: Record<string, string>) =>
      buildNfv({ flavour, request: {}, grant: { zones, vduZones }, images: {}, template, defaultZone: 'az-1' }) as {
        VDU: Record<string, Record<string, unknown>>;
      };
    const both = nfv({ VDU1: 'zone-b', VDU2: 'zone-a' });
    assert.deepEqual([both.VDU.VDU1?.locationConstraints, both.VDU.VDU2?.locationConstraints], ['zone-b', 'zone-a']);
    const one = nfv({ VDU2: 'zone-b' });
    assert.deepEqual([one.VDU.VDU1?.locationConstraints, one.VDU.VDU2?.locationConstraints], ['zone-a', 'zone-b']);
  });

  it("keeps a scaled VDU's zone, moves one without VNFCs where the scale's grant says, and refuses to split one", () => {
    const placed = { zones: [{ id: 'z', zoneId: 'zone-a' }], vduZones: { VDU2: 'zone-b' } };
    assert.deepEqual(scaleChoices(placed, { vduZones: { VDU1: 'zone-a' } }, { VDU1: 1, VDU2: 1 }), placed, 'the same zone: nothing changes');
    assert.deepEqual(scaleChoices(placed, { vduZones: { VDU1: 'zone-c' } }, { VDU1: 0, VDU2: 1 }).vduZones, { VDU2: 'zone-b', VDU1: 'zone-c' });
    assert.throws(
      () => scaleChoices(placed, { vduZones: { VDU2: 'zone-a' } }, { VDU1: 1, VDU2: 2 }),
      (error: unknown) => error instanceof UnprocessableEntityError && /new VNFCs of VDU2 in zone zone-a, but its VNFCs are in zone zone-b/.test(error.message),
    );
  });

  it('counts instances by level, then initial delta, then the profile minimum', () => {
    assert.equal(desiredCapacity(flavour, 'VDU1', 'instantiation_level_2'), 2);
    assert.equal(desiredCapacity(flavour, 'VDU1', undefined), 1, 'the default level');
    const noLevels: FlavourInfo = { ...flavour, vduInstantiationLevels: {}, instantiationLevels: { levels: {} } };
    assert.equal(desiredCapacity({ ...noLevels, vduInitialDeltas: { VDU1: 3 } }, 'VDU1', undefined), 3);
    assert.equal(desiredCapacity({ ...noLevels, vduInitialDeltas: {} }, 'VDU1', undefined), 1);
    assert.throws(
      () => buildNfv({ flavour, instantiationLevelId: 'nope', request: {}, grant: {}, images: {}, template: {} }),
      /instantiation level nope is not defined/,
    );
  });

  it('shapes fixed_ips the template reads even when no ext VL names the CP', () => {
    const template = {
      resources: { port: { properties: { fixed_ips: [{ ip_address: { get_param: ['nfv', 'CP', 'VDU2_CP9', 'fixed_ips', 0, 'ip_address'] } }] } } },
    };
    const nfv = buildNfv({ flavour, request: {}, grant: {}, images: {}, template }) as { CP: Record<string, unknown> };
    assert.deepEqual(nfv.CP, { VDU2_CP9: { fixed_ips: [] } });
    assert.deepEqual(
      fixedIpsOf({
        cpdId: 'x',
        cpConfig: {
          a: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1 }] } }] },
        },
      }),
      [],
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Heat's answer to GET .../resources?nested_depth=N for the sample: VDU1 is an AutoScalingGroup whose
// members are nested stacks of VDU1.yaml (server and two ports), VDU2 a server with a volume.

const HEAT = 'http://192.0.2.1/heat-api/v1/project-1';

function resource(stack: [string, string], name: string, type: string, physical: string, extra: Partial<HeatResource> = {}): HeatResource {
  return {
    resource_name: name,
    resource_type: type,
    physical_resource_id: physical,
    resource_status: 'CREATE_COMPLETE',
    creation_time: '2026-01-01T00:00:00Z',
    required_by: [],
    links: [
      { href: `${HEAT}/stacks/${stack[0]}/${stack[1]}/resources/${name}`, rel: 'self' },
      { href: `${HEAT}/stacks/${stack[0]}/${stack[1]}`, rel: 'stack' },
    ],
    ...extra,
  };
}

function sampleResources(members: number): HeatResource[] {
  const top: [string, string] = ['vnf-i1', 'top-id'];
  const group: [string, string] = ['vnf-i1-VDU1-x7', 'group-id'];
  const list: HeatResource[] = [
    resource(top, 'VDU1', 'OS::Heat::AutoScalingGroup', group[1]),
    resource(top, 'VDU2', 'OS::Nova::Server', 'server-2', { creation_time: '2026-01-01T00:00:05Z' }),
    resource(top, 'VirtualStorage', 'OS::Cinder::Volume', 'volume-1', { required_by: ['VDU2'] }),
    resource(top, 'VDU2_CP2', 'OS::Neutron::Port', 'port-22', { required_by: ['VDU2'] }),
    resource(top, 'anti_affinity_group', 'OS::Nova::ServerGroup', 'group-aa', { required_by: ['VDU1', 'VDU2'] }),
    resource(top, 'internalVL1', 'OS::Neutron::Net', 'net-1', { required_by: ['VDU1', 'VDU2_CP2', 'internalVL1_subnet'] }),
    resource(top, 'internalVL1_subnet', 'OS::Neutron::Subnet', 'subnet-1'),
  ];
  for (let index = 1; index <= members; index += 1) {
    const member: [string, string] = [`vnf-i1-VDU1-x7-m${index}-y`, `member-${index}`];
    list.push(
      resource(group, `m${index}`, 'VDU1.yaml', member[1], { parent_resource: 'VDU1' }),
      resource(member, 'VDU1', 'OS::Nova::Server', `server-1${index}`, { parent_resource: `m${index}`, creation_time: `2026-01-01T00:00:1${index}Z` }),
      resource(member, 'VDU1_CP1', 'OS::Neutron::Port', `port-1${index}-1`, { parent_resource: `m${index}`, required_by: ['VDU1'] }),
      resource(member, 'VDU1_CP2', 'OS::Neutron::Port', `port-1${index}-2`, { parent_resource: `m${index}`, required_by: ['VDU1'] }),
    );
  }
  return list;
}

describe('Heat resources as instantiatedVnfInfo', () => {
  it('reads the stack of a resource from its stack link', () => {
    assert.equal(resourceStackId(resource(['a', 'b'], 'r', 't', 'p')), 'a/b');
    assert.equal(resourceStackId({ resource_name: 'r', resource_type: 't' }), undefined);
  });

  it('maps servers, volumes, networks and ports of the sample', () => {
    const collected = collectResources({
      resources: sampleResources(1),
      flavour,
      extVirtualLinks: EXT_VL_REQUEST.extVirtualLinks,
      vimConnectionId: 'vim-1',
    });
    const handle = (resourceId: string, type: string) => ({ vimConnectionId: 'vim-1', resourceId, vimLevelResourceType: type });
    assert.deepEqual(collected.vnfcResourceInfo, [
      {
        id: 'server-11',
        vduId: 'VDU1',
        computeResource: handle('server-11', 'OS::Nova::Server'),
        vnfcCpInfo: [
          { id: 'VDU1_CP1-server-11', cpdId: 'VDU1_CP1', vnfExtCpId: 'cp-port-11-1' },
          { id: 'VDU1_CP2-server-11', cpdId: 'VDU1_CP2', vnfLinkPortId: 'port-11-2' },
        ],
        metadata: {
          creation_time: '2026-01-01T00:00:11Z',
          stack_id: 'vnf-i1-VDU1-x7-m1-y/member-1',
          parent_stack_id: 'vnf-i1-VDU1-x7/group-id',
          parent_resource_name: 'm1',
        },
      },
      {
        id: 'server-2',
        vduId: 'VDU2',
        computeResource: handle('server-2', 'OS::Nova::Server'),
        storageResourceIds: ['volume-1'],
        vnfcCpInfo: [{ id: 'VDU2_CP2-server-2', cpdId: 'VDU2_CP2', vnfLinkPortId: 'port-22' }],
        metadata: { creation_time: '2026-01-01T00:00:05Z', stack_id: 'vnf-i1/top-id' },
      },
    ]);
    assert.deepEqual(collected.virtualStorageResourceInfo, [
      {
        id: 'volume-1',
        virtualStorageDescId: 'VirtualStorage',
        storageResource: handle('volume-1', 'OS::Cinder::Volume'),
        metadata: { stack_id: 'vnf-i1/top-id' },
      },
    ]);
    assert.deepEqual(collected.vnfVirtualLinkResourceInfo, [
      {
        id: 'net-1',
        vnfVirtualLinkDescId: 'internalVL1',
        networkResource: handle('net-1', 'OS::Neutron::Net'),
        vnfLinkPorts: [
          { id: 'port-11-2', resourceHandle: handle('port-11-2', 'OS::Neutron::Port'), cpInstanceId: 'VDU1_CP2-server-11', cpInstanceType: 'VNFC_CP' },
          { id: 'port-22', resourceHandle: handle('port-22', 'OS::Neutron::Port'), cpInstanceId: 'VDU2_CP2-server-2', cpInstanceType: 'VNFC_CP' },
        ],
      },
    ]);
    assert.deepEqual(collected.extCpInfo, [
      {
        id: 'cp-port-11-1',
        cpdId: 'VDU1_CP1',
        cpConfigId: 'VDU1_CP1-config',
        cpProtocolInfo: [
          { layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', addresses: ['10.0.0.10'], subnetId: 'subnet-public' }] } },
        ],
        extLinkPortId: 'port-11-1',
        associatedVnfcCpId: 'VDU1_CP1-server-11',
      },
    ]);
    assert.deepEqual(collected.extVirtualLinkInfo, [
      {
        id: 'ext-vl-1',
        resourceHandle: { vimConnectionId: 'vim-1', resourceId: 'net-public' },
        extLinkPorts: [{ id: 'port-11-1', resourceHandle: handle('port-11-1', 'OS::Neutron::Port'), cpInstanceId: 'cp-port-11-1' }],
        currentVnfExtCpData: EXT_VL_REQUEST.extVirtualLinks[0]?.extCps,
      },
    ]);
    assert.deepEqual(collected.vnfcInfo, [
      { id: 'VDU1-server-11', vduId: 'VDU1', vnfcResourceInfoId: 'server-11', vnfcState: 'STARTED' },
      { id: 'VDU2-server-2', vduId: 'VDU2', vnfcResourceInfoId: 'server-2', vnfcState: 'STARTED' },
    ]);
  });

  it('gives each scaling group member its own VNFC, newest first, with ids that do not change', () => {
    const first = collectResources({ resources: sampleResources(2), flavour, extVirtualLinks: [] });
    assert.deepEqual(
      first.vnfcResourceInfo.map((vnfc) => [vnfc.id, vnfc.vduId]),
      [
        ['server-12', 'VDU1'],
        ['server-11', 'VDU1'],
        ['server-2', 'VDU2'],
      ],
    );
    const ports = (id: string) => (first.vnfcResourceInfo.find((vnfc) => vnfc.id === id)!.vnfcCpInfo as Array<{ id: string }>).map((cp) => cp.id);
    assert.deepEqual(ports('server-12'), ['VDU1_CP1-server-12', 'VDU1_CP2-server-12'], 'each member pairs with its own ports');
    assert.deepEqual(first.extCpInfo, [], 'no ext VL in the request: no ext CP');
    assert.deepEqual(first.extVirtualLinkInfo, []);
    const again = collectResources({ resources: [...sampleResources(2)].reverse(), flavour, extVirtualLinks: [] });
    assert.deepEqual(again, first, 'the order Heat lists resources in does not matter');
  });

  it('ignores resources the VNFD does not name and resources without a physical id', () => {
    const resources = [
      ...sampleResources(0),
      resource(['vnf-i1', 'top-id'], 'helper', 'OS::Nova::Server', 'server-x'),
      resource(['vnf-i1', 'top-id'], 'VDU2', 'OS::Nova::Server', '', { physical_resource_id: null }),
    ].filter((item) => item.physical_resource_id !== 'server-2');
    const collected = collectResources({ resources, flavour, extVirtualLinks: [] });
    assert.deepEqual(collected.vnfcResourceInfo, []);
    assert.equal(collected.vnfVirtualLinkResourceInfo.length, 1);
    assert.deepEqual(
      (collected.vnfVirtualLinkResourceInfo[0] as { vnfLinkPorts?: unknown }).vnfLinkPorts,
      [{ id: 'port-22', resourceHandle: { resourceId: 'port-22', vimLevelResourceType: 'OS::Neutron::Port' } }],
      'a port whose server is gone is still on the VL, but is no VNFC CP',
    );
  });
});

describe('OpenStack error bodies', () => {
  it('finds the message each service puts in its own shape', () => {
    assert.equal(
      serviceMessage('{"error":{"code":401,"message":"The request you have made requires authentication.","title":"Unauthorized"}}'),
      'The request you have made requires authentication.',
    );
    assert.equal(
      serviceMessage(
        '{"explanation":"The resource could not be found.","code":404,"error":{"message":"The Stack (x) could not be found.","type":"EntityNotFound"},"title":"Not Found"}',
      ),
      'The Stack (x) could not be found.',
    );
    assert.equal(serviceMessage('{"itemNotFound":{"message":"Flavor m1.huge could not be found.","code":404}}'), 'Flavor m1.huge could not be found.');
    assert.equal(
      serviceMessage('{"NeutronError":{"type":"NetworkNotFound","message":"Network n could not be found.","detail":""}}'),
      'Network n could not be found.',
    );
    assert.equal(serviceMessage('<html><body><h1>404 Not Found</h1>\n No image found with ID x</body></html>'), '404 Not Found No image found with ID x');
  });
});
