// SOL001 VNFD parsing: a Tacker-style package (top file, vendor types, flavour files) yields every field
// onboarding and LCM use; hostile or broken VNFDs fail with a PackageError saying what and where.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PackageError } from '#lib/packages/errors.ts';
import type { ParsedVnfd, VnfdReader } from '#lib/packages/vnfd/model.ts';
import { parseVnfd, sizeInBytes } from '#lib/packages/vnfd/parse.ts';
import { SOL001_TYPE_FILES } from '#lib/packages/vnfd/tosca.ts';
import { VNFD_LIMITS, parseSafeYaml } from '#lib/yaml.ts';

const TOP = 'Definitions/sample_vnfd_top.yaml';
const TYPES = 'Definitions/sample_vnfd_types.yaml';
const DF = 'Definitions/sample_vnfd_df_simple.yaml';

const top = `tosca_definitions_version: tosca_simple_yaml_1_2

description: Sample VNF

imports:
  - etsi_nfv_sol001_common_types.yaml
  - etsi_nfv_sol001_vnfd_types.yaml
  - sample_vnfd_types.yaml
  - sample_vnfd_df_simple.yaml

topology_template:
  inputs:
    selected_flavour:
      type: string
      description: VNF deployment flavour selected by the consumer. It is provided in the API

  node_templates:
    VNF:
      type: company.provider.VNF
      properties:
        flavour_id: { get_input: selected_flavour }
        descriptor_id: b1bb0ce7-ebca-4fa7-95ed-4840d7000000
        provider: Company
        vnfm_info:
          - Tacker
`;

// product_name comes from a default, software_version from valid_values, descriptor_version from equal.
const types = `tosca_definitions_version: tosca_simple_yaml_1_2

description: VNF type definition

imports:
  - etsi_nfv_sol001_common_types.yaml
  - etsi_nfv_sol001_vnfd_types.yaml

node_types:
  company.provider.VNF:
    derived_from: tosca.nodes.nfv.VNF
    properties:
      descriptor_id:
        type: string
        constraints: [ valid_values: [ b1bb0ce7-ebca-4fa7-95ed-4840d7000000 ] ]
        default: b1bb0ce7-ebca-4fa7-95ed-4840d7000000
      descriptor_version:
        type: string
        constraints: [ equal: '1.0' ]
      provider:
        type: string
        constraints: [ valid_values: [ 'Company' ] ]
        default: 'Company'
      product_name:
        type: string
        default: 'Sample VNF'
      software_version:
        type: string
        constraints: [ valid_values: [ '1.0' ] ]
      vnfm_info:
        type: list
        entry_schema:
          type: string
        default: [ Tacker ]
      flavour_id:
        type: string
        constraints: [ valid_values: [ simple ] ]
        default: simple
      flavour_description:
        type: string
        default: "flavour"
    requirements:
      - virtual_link_external1:
          capability: tosca.capabilities.nfv.VirtualLinkable
      - virtual_link_external2:
          capability: tosca.capabilities.nfv.VirtualLinkable
    interfaces:
      Vnflcm:
        type: tosca.interfaces.nfv.Vnflcm

  company.provider.Vdu:
    derived_from: tosca.nodes.nfv.Vdu.Compute

  company.provider.Storage:
    derived_from: tosca.nodes.nfv.Vdu.VirtualBlockStorage
`;

const df = `tosca_definitions_version: tosca_simple_yaml_1_2

description: Simple deployment flavour for Sample VNF

imports:
  - etsi_nfv_sol001_common_types.yaml
  - etsi_nfv_sol001_vnfd_types.yaml
  - sample_vnfd_types.yaml

topology_template:
  inputs:
    descriptor_id:
      type: string
    flavour_id:
      type: string

  substitution_mappings:
    node_type: company.provider.VNF
    properties:
      flavour_id: simple
    requirements:
      virtual_link_external1_1: [ VDU1_CP1, virtual_link ]
      virtual_link_external1_2: [ VDU2_CP1, virtual_link ]
      virtual_link_external2_1: [ VDU1_CP1, virtual_link ]
      virtual_link_internal: []

  node_templates:
    VNF:
      type: company.provider.VNF
      properties:
        flavour_description: A simple flavour
      interfaces:
        Vnflcm:
          instantiate: []
          instantiate_start:
            implementation: sample-script
          instantiate_end: []
          terminate_end:
            implementation: sample-script
          change_current_package:
            implementation:
              primary: coordinate-script
              dependencies: [ helper-lib ]
      artifacts:
        sample-script:
          description: Sample script
          type: tosca.artifacts.Implementation.Python
          file: ../Scripts/sample_script.py
        coordinate-script:
          type: tosca.artifacts.Implementation.Python
          file: ../Scripts/coordinate_vnf.py
        helper-lib:
          type: tosca.artifacts.Implementation.Python
          file: ../Scripts/helper.py

    VDU1:
      type: tosca.nodes.nfv.Vdu.Compute
      properties:
        name: VDU1
        description: VDU1 compute node
        vdu_profile:
          min_number_of_instances: 1
          max_number_of_instances: 3
        sw_image_data:
          name: cirros-0.5.2-x86_64-disk
          version: '0.5.2'
          checksum:
            algorithm: sha-256
            hash: 932fcae93574e242dc3d772d5235061747dfe537668443a1f0567d893614b464
          container_format: bare
          disk_format: qcow2
          min_disk: 1 GB
          min_ram: 256 MB
          size: 1 GiB
        monitoring_parameters:
          - name: cpu
            performance_metric: v_cpu_usage_mean_vnf
      artifacts:
        sw_image:
          type: tosca.artifacts.nfv.SwImage
          file: ../Files/images/cirros-0.5.2-x86_64-disk.img
          metadata:
            os_type: linux
            hw_disk_bus: 2
      capabilities:
        virtual_compute:
          properties:
            requested_additional_capabilities:
              properties:
                requested_additional_capability_name: m1.tiny
                support_mandatory: true
                target_performance_parameters:
                  entry_schema: test
            virtual_memory:
              virtual_mem_size: 512 MB
            virtual_cpu:
              num_virtual_cpu: 1
            virtual_local_storage:
              - size_of_storage: 3 GB

    VDU2:
      type: company.provider.Vdu
      properties:
        name: VDU2
        description: VDU2 compute node
        vdu_profile:
          min_number_of_instances: 1
          max_number_of_instances: 2
        boot_order: [ VirtualStorage ]
      capabilities:
        virtual_compute:
          properties:
            virtual_memory:
              virtual_mem_size: 1 GiB
            virtual_cpu:
              num_virtual_cpu: 2
      requirements:
        - virtual_storage: VirtualStorage

    VirtualStorage:
      type: company.provider.Storage
      properties:
        virtual_block_storage_data:
          size_of_storage: 4 GB
          rdma_enabled: false
        sw_image_data:
          name: VirtualStorage-image
          version: '1.1'
          checksum:
            algorithm: sha-512
            hash: 6b813aa46bb90b4da216a4d19376593fa3f4fc7e617f03a92b7fe11e9a3981cbe8f0959dbebe36225e5f53dc4492341a4863cac4ed1ee0909f3fc78ef9c3e869
          container_format: bare
          disk_format: raw
          min_disk: 2 GiB
          size: 500 MiB
      artifacts:
        sw_image: ../Files/images/storage.img

    VDU1_CP1:
      type: tosca.nodes.nfv.VduCp
      properties:
        layer_protocols: [ ipv4 ]
        order: 0
      requirements:
        - virtual_binding: VDU1

    VDU1_CP2:
      type: tosca.nodes.nfv.VduCp
      properties:
        layer_protocols: [ ipv4 ]
        order: 1
      requirements:
        - virtual_binding: VDU1
        - virtual_link: internalVL1

    VDU2_CP1:
      type: tosca.nodes.nfv.VduCp
      properties:
        layer_protocols: [ ipv4 ]
        order: 0
        vnic_type: direct
      requirements:
        - virtual_binding:
            node: VDU2
            relationship: tosca.relationships.nfv.VirtualBindsTo

    VDU2_CP2:
      type: tosca.nodes.nfv.VduCp
      properties:
        layer_protocols: [ ipv4, ipv6 ]
      requirements:
        - virtual_binding: VDU2
        - virtual_link: internalVL1

    internalVL1:
      type: tosca.nodes.nfv.VnfVirtualLink
      properties:
        connectivity_type:
          layer_protocols: [ ipv4 ]
        description: Internal Virtual link in the VNF
        vl_profile:
          max_bitrate_requirements:
            root: 1048576
            leaf: 1048576
          min_bitrate_requirements:
            root: 1048576
            leaf: 1048576
          virtual_link_protocol_data:
            - associated_layer_protocol: ipv4
              l3_protocol_data:
                ip_version: ipv4
                cidr: 192.168.3.0/24

  groups:
    affinityOrAntiAffinityGroup1:
      type: tosca.groups.nfv.PlacementGroup
      members: [ VDU1, VDU2 ]

  policies:
    - scaling_aspects:
        type: tosca.policies.nfv.ScalingAspects
        properties:
          aspects:
            VDU1_scale:
              name: VDU1_scale
              description: VDU1 scaling aspect
              max_scale_level: 2
              step_deltas:
                - delta_1
            VDU2_scale:
              max_scale_level: 1

    - VDU1_initial_delta:
        type: tosca.policies.nfv.VduInitialDelta
        properties:
          initial_delta:
            number_of_instances: 1
        targets: [ VDU1 ]

    - VDU2_initial_delta:
        type: tosca.policies.nfv.VduInitialDelta
        properties:
          initial_delta:
            number_of_instances: 1
        targets: [ VDU2 ]

    - VDU1_scaling_aspect_deltas:
        type: tosca.policies.nfv.VduScalingAspectDeltas
        properties:
          aspect: VDU1_scale
          deltas:
            delta_1:
              number_of_instances: 1
        targets: [ VDU1 ]

    - VDU2_scaling_aspect_deltas:
        type: tosca.policies.nfv.VduScalingAspectDeltas
        properties:
          aspect: VDU2_scale
          deltas:
            delta_2:
              number_of_instances: 1
        targets: [ VDU2 ]

    - instantiation_levels:
        type: tosca.policies.nfv.InstantiationLevels
        properties:
          levels:
            instantiation_level_1:
              description: Smallest size
              scale_info:
                VDU1_scale:
                  scale_level: 0
            instantiation_level_2:
              description: Largest size
              scale_info:
                VDU1_scale:
                  scale_level: 2
                VDU2_scale:
                  scale_level: 1
          default_level: instantiation_level_1

    - VDU1_instantiation_levels:
        type: tosca.policies.nfv.VduInstantiationLevels
        properties:
          levels:
            instantiation_level_1:
              number_of_instances: 1
            instantiation_level_2:
              number_of_instances: 3
        targets: [ VDU1 ]

    - VDU2_instantiation_levels:
        type: tosca.policies.nfv.VduInstantiationLevels
        properties:
          levels:
            instantiation_level_1:
              number_of_instances: 1
            instantiation_level_2:
              number_of_instances: 2
        targets: [ VDU2 ]

    - internalVL1_instantiation_levels:
        type: tosca.policies.nfv.VirtualLinkInstantiationLevels
        properties:
          levels:
            instantiation_level_1:
              bitrate_requirements:
                root: 1048576
        targets: [ internalVL1 ]

    - policy_antiaffinity_group:
        type: tosca.policies.nfv.AntiAffinityRule
        targets: [ affinityOrAntiAffinityGroup1 ]
        properties:
          scope: zone

    - policy_affinity_vdu1:
        type: tosca.policies.nfv.AffinityRule
        targets: [ VDU1 ]
        properties:
          scope: nfvi_node
`;

const BASE_FILES: Readonly<Record<string, string>> = {
  'TOSCA-Metadata/TOSCA.meta': 'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-by: test\nEntry-Definitions: Definitions/sample_vnfd_top.yaml\n',
  [TOP]: top,
  [TYPES]: types,
  [DF]: df,
  'Scripts/sample_script.py': 'print("hello")\n',
  'Scripts/coordinate_vnf.py': 'print("coordinate")\n',
  'Scripts/helper.py': '\n',
  'Files/images/cirros-0.5.2-x86_64-disk.img': 'not really an image',
  'Files/images/storage.img': 'not really an image either',
};

/** The in-memory package reader parseVnfd sees; counts reads so tests can see files are read once. */
function reader(files: Readonly<Record<string, string>>): VnfdReader & { reads: string[] } {
  const map = new Map(Object.entries(files));
  const reads: string[] = [];
  return {
    reads,
    has: (path) => map.has(path),
    readText: async (path) => {
      reads.push(path);
      const text = map.get(path);
      if (text === undefined) throw new Error(`test reader: no file ${path}`);
      return text;
    },
  };
}

/** The base package with `old` replaced by `replacement` in one file (the replacement must apply). */
function edit(path: string, old: string | RegExp, replacement: string, files: Readonly<Record<string, string>> = BASE_FILES): Record<string, string> {
  const text = files[path];
  assert.ok(text !== undefined, `no fixture file ${path}`);
  const changed = text.replace(old, replacement);
  assert.notEqual(changed, text, `the edit of ${path} did not apply`);
  return { ...files, [path]: changed };
}

/** 1-based line of the first line of `text` that contains `needle`. */
function lineOf(text: string | undefined, needle: string): number {
  const index = (text ?? '').split('\n').findIndex((line) => line.includes(needle));
  assert.ok(index >= 0, `no line contains ${needle}`);
  return index + 1;
}

function without(path: string, files: Readonly<Record<string, string>> = BASE_FILES): Record<string, string> {
  const copy = { ...files };
  delete copy[path];
  return copy;
}

async function parse(files: Readonly<Record<string, string>>, entry = TOP): Promise<ParsedVnfd> {
  return parseVnfd(reader(files), entry);
}

async function rejects(files: Readonly<Record<string, string>>, expected: { message: string | RegExp; where: string }, entry = TOP): Promise<void> {
  await assert.rejects(parse(files, entry), (error: unknown) => {
    assert.ok(error instanceof PackageError, `expected a PackageError, got ${String(error)}`);
    if (typeof expected.message === 'string') assert.equal(error.message, expected.message);
    else assert.match(error.message, expected.message);
    assert.equal(error.where, expected.where);
    return true;
  });
}

const SHIPPED = Object.fromEntries(
  SOL001_TYPE_FILES.map((name) => [name, readFileSync(new URL(`../../../lib/packages/sol001/${name}`, import.meta.url), 'utf8')]),
);

describe('parseVnfd: a Tacker-style VNFD (top file, vendor types, simple flavour)', () => {
  it("takes the VNF identity from the top VNF node, falling back to the type's defaults and constraints", async () => {
    const vnfd = await parse(BASE_FILES);
    assert.equal(vnfd.vnfdId, 'b1bb0ce7-ebca-4fa7-95ed-4840d7000000');
    assert.equal(vnfd.vnfProvider, 'Company');
    assert.equal(vnfd.vnfProductName, 'Sample VNF'); // default
    assert.equal(vnfd.vnfSoftwareVersion, '1.0'); // constraints: [valid_values: ['1.0']]
    assert.equal(vnfd.vnfdVersion, '1.0'); // constraints: [equal: '1.0']
    assert.deepEqual(vnfd.vnfmInfo, ['Tacker']);
  });

  it('lists the VNFD files inside the package, entry first, without the shipped SOL001 types', async () => {
    const vnfd = await parse(BASE_FILES);
    assert.deepEqual(vnfd.descriptorFiles, [TOP, TYPES, DF]);
  });

  it('reads each file once although several files import the same ones', async () => {
    const files = reader(BASE_FILES);
    await parseVnfd(files, TOP);
    assert.deepEqual(files.reads, [TOP, TYPES, DF]);
  });

  it('extracts the flavour: VDUs, storage, CPs, VLs, policies, LCM operations and external CPs', async () => {
    const vnfd = await parse(BASE_FILES);
    assert.equal(vnfd.flavours.length, 1);
    assert.deepEqual(vnfd.flavours[0], {
      flavourId: 'simple',
      description: 'A simple flavour',
      vdus: [
        {
          id: 'VDU1',
          name: 'VDU1',
          description: 'VDU1 compute node',
          vduProfile: { minNumberOfInstances: 1, maxNumberOfInstances: 3 },
          swImage: {
            name: 'cirros-0.5.2-x86_64-disk',
            version: '0.5.2',
            checksum: { algorithm: 'sha-256', hash: '932fcae93574e242dc3d772d5235061747dfe537668443a1f0567d893614b464' },
            containerFormat: 'bare',
            diskFormat: 'qcow2',
            minDisk: '1 GB',
            minRam: '256 MB',
            size: '1 GiB',
            file: 'Files/images/cirros-0.5.2-x86_64-disk.img',
          },
          virtualCompute: {
            virtualMemSize: '512 MB',
            numVirtualCpu: 1,
            virtualLocalStorage: [{ size_of_storage: '3 GB' }],
            requestedAdditionalCapabilityName: 'm1.tiny',
          },
          storages: [],
          monitoringParameters: [{ name: 'cpu', performance_metric: 'v_cpu_usage_mean_vnf' }],
        },
        {
          id: 'VDU2',
          name: 'VDU2',
          description: 'VDU2 compute node',
          vduProfile: { minNumberOfInstances: 1, maxNumberOfInstances: 2 },
          virtualCompute: { virtualMemSize: '1 GiB', numVirtualCpu: 2 },
          storages: ['VirtualStorage'],
          bootOrder: ['VirtualStorage'],
        },
      ],
      storages: [
        {
          id: 'VirtualStorage',
          virtualBlockStorageData: { sizeOfStorage: '4 GB', rdmaEnabled: false },
          swImage: {
            name: 'VirtualStorage-image',
            version: '1.1',
            checksum: {
              algorithm: 'sha-512',
              hash: '6b813aa46bb90b4da216a4d19376593fa3f4fc7e617f03a92b7fe11e9a3981cbe8f0959dbebe36225e5f53dc4492341a4863cac4ed1ee0909f3fc78ef9c3e869',
            },
            containerFormat: 'bare',
            diskFormat: 'raw',
            minDisk: '2 GiB',
            size: '500 MiB',
            file: 'Files/images/storage.img',
          },
        },
      ],
      cps: [
        { id: 'VDU1_CP1', layerProtocols: ['ipv4'], order: 0, vdu: 'VDU1' },
        { id: 'VDU1_CP2', layerProtocols: ['ipv4'], order: 1, vdu: 'VDU1', virtualLink: 'internalVL1' },
        { id: 'VDU2_CP1', layerProtocols: ['ipv4'], order: 0, vnicType: 'direct', vdu: 'VDU2' },
        { id: 'VDU2_CP2', layerProtocols: ['ipv4', 'ipv6'], vdu: 'VDU2', virtualLink: 'internalVL1' },
      ],
      extCps: [],
      virtualLinks: [
        {
          id: 'internalVL1',
          connectivityType: { layer_protocols: ['ipv4'] },
          vlProfile: {
            max_bitrate_requirements: { root: 1048576, leaf: 1048576 },
            min_bitrate_requirements: { root: 1048576, leaf: 1048576 },
            virtual_link_protocol_data: [{ associated_layer_protocol: 'ipv4', l3_protocol_data: { ip_version: 'ipv4', cidr: '192.168.3.0/24' } }],
          },
          description: 'Internal Virtual link in the VNF',
        },
      ],
      scalingAspects: [
        { id: 'VDU1_scale', name: 'VDU1_scale', description: 'VDU1 scaling aspect', maxScaleLevel: 2, stepDeltas: ['delta_1'] },
        { id: 'VDU2_scale', maxScaleLevel: 1 },
      ],
      vduScalingAspectDeltas: [
        { aspectId: 'VDU1_scale', deltas: { delta_1: { VDU1: 1 } }, targets: ['VDU1'] },
        { aspectId: 'VDU2_scale', deltas: { delta_2: { VDU2: 1 } }, targets: ['VDU2'] },
      ],
      instantiationLevels: {
        default: 'instantiation_level_1',
        levels: {
          instantiation_level_1: { description: 'Smallest size', scaleInfo: { VDU1_scale: { scaleLevel: 0 } } },
          instantiation_level_2: { description: 'Largest size', scaleInfo: { VDU1_scale: { scaleLevel: 2 }, VDU2_scale: { scaleLevel: 1 } } },
        },
      },
      vduInstantiationLevels: {
        VDU1: { instantiation_level_1: 1, instantiation_level_2: 3 },
        VDU2: { instantiation_level_1: 1, instantiation_level_2: 2 },
      },
      vduInitialDeltas: { VDU1: 1, VDU2: 1 },
      affinityRules: [
        { id: 'policy_antiaffinity_group', type: 'anti-affinity', scope: 'zone', targets: ['VDU1', 'VDU2'] },
        { id: 'policy_affinity_vdu1', type: 'affinity', scope: 'nfvi_node', targets: ['VDU1'] },
      ],
      lcmOperations: {
        instantiate: {},
        instantiate_start: {
          implementation: 'sample-script',
          artifact: { name: 'sample-script', file: 'Scripts/sample_script.py', type: 'tosca.artifacts.Implementation.Python' },
        },
        instantiate_end: {},
        terminate_end: {
          implementation: 'sample-script',
          artifact: { name: 'sample-script', file: 'Scripts/sample_script.py', type: 'tosca.artifacts.Implementation.Python' },
        },
        change_current_package: {
          implementation: 'coordinate-script',
          artifact: { name: 'coordinate-script', file: 'Scripts/coordinate_vnf.py', type: 'tosca.artifacts.Implementation.Python' },
          dependencies: [{ name: 'helper-lib', file: 'Scripts/helper.py', type: 'tosca.artifacts.Implementation.Python' }],
        },
      },
      externalCps: ['VDU1_CP1', 'VDU2_CP1'],
    });
  });

  it('lists the software images contained in the package, sizes in bytes (SOL005 VnfPackageSoftwareImageInfo)', async () => {
    const vnfd = await parse(BASE_FILES);
    assert.deepEqual(vnfd.softwareImages, [
      {
        id: 'VDU1',
        name: 'cirros-0.5.2-x86_64-disk',
        version: '0.5.2',
        checksum: { algorithm: 'sha-256', hash: '932fcae93574e242dc3d772d5235061747dfe537668443a1f0567d893614b464' },
        containerFormat: 'bare',
        diskFormat: 'qcow2',
        minDisk: 1_000_000_000,
        minRam: 256_000_000,
        size: 1_073_741_824,
        imagePath: 'Files/images/cirros-0.5.2-x86_64-disk.img',
        userMetadata: { os_type: 'linux', hw_disk_bus: '2' },
      },
      {
        id: 'VirtualStorage',
        name: 'VirtualStorage-image',
        version: '1.1',
        checksum: {
          algorithm: 'sha-512',
          hash: '6b813aa46bb90b4da216a4d19376593fa3f4fc7e617f03a92b7fe11e9a3981cbe8f0959dbebe36225e5f53dc4492341a4863cac4ed1ee0909f3fc78ef9c3e869',
        },
        containerFormat: 'bare',
        diskFormat: 'raw',
        minDisk: 2_147_483_648,
        size: 524_288_000,
        imagePath: 'Files/images/storage.img',
      },
    ]);
  });

  it('lists every artifact file the VNFD references', async () => {
    const vnfd = await parse(BASE_FILES);
    assert.deepEqual(vnfd.artifactFiles, [
      'Scripts/sample_script.py',
      'Scripts/coordinate_vnf.py',
      'Scripts/helper.py',
      'Files/images/cirros-0.5.2-x86_64-disk.img',
      'Files/images/storage.img',
    ]);
  });

  it('returns plain JSON data (it is stored as vnfd.json)', async () => {
    const vnfd = await parse(BASE_FILES);
    assert.deepEqual(JSON.parse(JSON.stringify(vnfd)), vnfd);
  });
});

describe('parseVnfd: imports', () => {
  it('takes the SOL001 types from the shipped copies when the package does not bundle them', async () => {
    for (const name of SOL001_TYPE_FILES) assert.equal(BASE_FILES[`Definitions/${name}`], undefined);
    const vnfd = await parse(BASE_FILES);
    assert.equal(vnfd.flavours[0]?.vdus.length, 2);
  });

  it('takes the SOL001 types from the shipped copies when imported by URL, and refuses other URLs', async () => {
    const url = 'https://forge.etsi.org/rep/nfv/SOL001/raw/v2.6.1/etsi_nfv_sol001_vnfd_types.yaml';
    const vnfd = await parse(edit(TYPES, '  - etsi_nfv_sol001_vnfd_types.yaml', `  - ${url}`));
    assert.deepEqual(vnfd.descriptorFiles, [TOP, TYPES, DF]);

    await rejects(edit(TYPES, '  - etsi_nfv_sol001_vnfd_types.yaml', '  - https://example.com/vendor_types.yaml'), {
      message:
        'imports https://example.com/vendor_types.yaml, a URL; a VNFD imports files of its package (the ETSI SOL001 type files excepted, which the VNFM ships)',
      where: `${TYPES}: imports[1]`,
    });
  });

  it('uses the SOL001 files the package bundles, and lists them as VNFD files', async () => {
    const files = { ...BASE_FILES, ...Object.fromEntries(SOL001_TYPE_FILES.map((name) => [`Definitions/${name}`, SHIPPED[name] as string])) };
    const vnfd = await parse(files);
    assert.deepEqual(vnfd.descriptorFiles, [TOP, 'Definitions/etsi_nfv_sol001_common_types.yaml', 'Definitions/etsi_nfv_sol001_vnfd_types.yaml', TYPES, DF]);
  });

  it('reads a bundled SOL001 types file that strict YAML refuses (as ETSI published v2.6.1) as the shipped copy', async () => {
    // Every published copy has a flow list continued at column 0, which PyYAML accepts.
    const published = (SHIPPED['etsi_nfv_sol001_vnfd_types.yaml'] as string).replace(/^ +packet_incoming_vnf_ext_cp/m, 'packet_incoming_vnf_ext_cp');
    assert.throws(() => parseSafeYaml(published, 'x.yaml'), /is not valid YAML/);
    const vnfd = await parse({ ...BASE_FILES, 'Definitions/etsi_nfv_sol001_vnfd_types.yaml': published });
    assert.ok(vnfd.descriptorFiles.includes('Definitions/etsi_nfv_sol001_vnfd_types.yaml'));
    assert.equal(vnfd.flavours[0]?.flavourId, 'simple');
  });

  it('accepts the TOSCA list-of-maps and {file: ...} import forms', async () => {
    const files = edit(
      TOP,
      `imports:
  - etsi_nfv_sol001_common_types.yaml
  - etsi_nfv_sol001_vnfd_types.yaml
  - sample_vnfd_types.yaml
  - sample_vnfd_df_simple.yaml`,
      `imports:
  - sol001_common: etsi_nfv_sol001_common_types.yaml
  - sol001_vnfd:
      file: etsi_nfv_sol001_vnfd_types.yaml
  - file: sample_vnfd_types.yaml
  - flavour_simple: { file: ./sample_vnfd_df_simple.yaml }`,
    );
    const vnfd = await parse(files);
    assert.deepEqual(vnfd.descriptorFiles, [TOP, TYPES, DF]);
  });

  it('handles import cycles, reading each file once', async () => {
    const files = edit(DF, '  - sample_vnfd_types.yaml\n', '  - sample_vnfd_types.yaml\n  - sample_vnfd_top.yaml\n');
    const cyclic = edit(TYPES, '  - etsi_nfv_sol001_vnfd_types.yaml\n', '  - etsi_nfv_sol001_vnfd_types.yaml\n  - sample_vnfd_df_simple.yaml\n', files);
    const read = reader(cyclic);
    const vnfd = await parseVnfd(read, TOP);
    assert.deepEqual(vnfd.descriptorFiles, [TOP, TYPES, DF]);
    assert.deepEqual(read.reads, [TOP, TYPES, DF]);
  });

  it('resolves imports relative to the importing file', async () => {
    const files = without(TYPES, edit(DF, '  - sample_vnfd_types.yaml', '  - types/sample_vnfd_types.yaml'));
    files['Definitions/types/sample_vnfd_types.yaml'] = types;
    const moved = edit(TOP, '  - sample_vnfd_types.yaml', '  - ./types/../types/sample_vnfd_types.yaml', files);
    const vnfd = await parse(moved);
    assert.deepEqual(vnfd.descriptorFiles, [TOP, 'Definitions/types/sample_vnfd_types.yaml', DF]);
  });

  it('refuses an import that escapes the package root', async () => {
    await rejects(edit(TOP, '  - sample_vnfd_types.yaml', '  - ../../sample_vnfd_types.yaml'), {
      message:
        'imports ../../sample_vnfd_types.yaml, which is outside the package; a VNFD imports files of its package (the ETSI SOL001 type files excepted, which the VNFM ships)',
      where: `${TOP}: imports[2]`,
    });
  });

  it('refuses an absolute import', async () => {
    await rejects(edit(TOP, '  - sample_vnfd_types.yaml', '  - /etc/passwd'), {
      message: 'imports /etc/passwd, an absolute path; a VNFD imports files of its package (the ETSI SOL001 type files excepted, which the VNFM ships)',
      where: `${TOP}: imports[2]`,
    });
  });

  it('refuses an import of a file the package does not have', async () => {
    await rejects(edit(TOP, '  - sample_vnfd_types.yaml', '  - vendor_types.yaml'), {
      message:
        'imports vendor_types.yaml, which is not in the package (looked for Definitions/vendor_types.yaml); a VNFD imports files of its package (the ETSI SOL001 type files excepted, which the VNFM ships)',
      where: `${TOP}: imports[2]`,
    });
  });

  it('refuses an import from a TOSCA repository', async () => {
    await rejects(edit(TOP, '  - sample_vnfd_types.yaml', '  - { file: vendor_types.yaml, repository: vendor_repo }'), {
      message:
        'imports vendor_types.yaml, from repository vendor_repo; a VNFD imports files of its package (the ETSI SOL001 type files excepted, which the VNFM ships)',
      where: `${TOP}: imports[2]`,
    });
  });

  it('refuses imports that are neither a name nor a {file: ...} mapping', async () => {
    await rejects(edit(TOP, '  - sample_vnfd_types.yaml', '  - 42'), {
      message: 'is number 42; an import is a file name, {file: name} or {<name>: {file: name}}',
      where: `${TOP}: imports[2]`,
    });
  });

  it('refuses a missing entry definitions file', async () => {
    await rejects(BASE_FILES, { message: 'the entry definitions file is not in the package', where: 'Definitions/nope.yaml' }, 'Definitions/nope.yaml');
  });
});

describe('parseVnfd: types and flavours', () => {
  it("collects the flavours of several flavour files, and reads each flavour's own nodes", async () => {
    const complex = df
      .replace('flavour_id: simple', 'flavour_id: complex')
      .replace('flavour_description: A simple flavour', 'flavour_description: A complex flavour')
      .replace('max_number_of_instances: 3', 'max_number_of_instances: 5');
    const files = edit(TOP, '  - sample_vnfd_df_simple.yaml\n', '  - sample_vnfd_df_simple.yaml\n  - sample_vnfd_df_complex.yaml\n');
    files['Definitions/sample_vnfd_df_complex.yaml'] = complex;
    const vnfd = await parse(files);
    assert.deepEqual(
      vnfd.flavours.map((flavour) => [flavour.flavourId, flavour.description, flavour.vdus[0]?.vduProfile?.maxNumberOfInstances]),
      [
        ['simple', 'A simple flavour', 3],
        ['complex', 'A complex flavour', 5],
      ],
    );
    assert.deepEqual(vnfd.descriptorFiles, [TOP, TYPES, DF, 'Definitions/sample_vnfd_df_complex.yaml']);
    // The same node (same image) in two flavours is one software image of the package.
    assert.deepEqual(
      vnfd.softwareImages.map((image) => image.id),
      ['VDU1', 'VirtualStorage'],
    );
  });

  it('refuses two flavours with the same flavour_id', async () => {
    const files = edit(TOP, '  - sample_vnfd_df_simple.yaml\n', '  - sample_vnfd_df_simple.yaml\n  - sample_vnfd_df_copy.yaml\n');
    files['Definitions/sample_vnfd_df_copy.yaml'] = df;
    await rejects(files, {
      message: `deployment flavour simple is defined twice (also in ${DF})`,
      where: 'Definitions/sample_vnfd_df_copy.yaml: topology_template.substitution_mappings.properties.flavour_id',
    });
  });

  it('follows derived_from chains across files (a vendor VNF type derived from a vendor type)', async () => {
    const files = edit(TYPES, '  company.provider.VNF:\n    derived_from: tosca.nodes.nfv.VNF', '  company.provider.VNF:\n    derived_from: company.base.VNF');
    files['Definitions/base_types.yaml'] =
      'tosca_definitions_version: tosca_simple_yaml_1_2\nnode_types:\n  company.base.VNF:\n    derived_from: tosca.nodes.nfv.VNF\n';
    const imported = edit(TYPES, '  - etsi_nfv_sol001_vnfd_types.yaml\n', '  - etsi_nfv_sol001_vnfd_types.yaml\n  - base_types.yaml\n', files);
    const vnfd = await parse(imported);
    assert.equal(vnfd.vnfdId, 'b1bb0ce7-ebca-4fa7-95ed-4840d7000000');
    assert.equal(vnfd.flavours[0]?.flavourId, 'simple');
  });

  it("uses a get_input's default for a VNF property", async () => {
    const files = edit(TOP, '        provider: Company\n', '        provider: { get_input: vendor }\n');
    const withInput = edit(TOP, '  inputs:\n', '  inputs:\n    vendor:\n      type: string\n      default: ACME\n', files);
    assert.equal((await parse(withInput)).vnfProvider, 'ACME');
  });

  it('refuses a derived_from cycle', async () => {
    const files = edit(
      TYPES,
      '  company.provider.Vdu:\n    derived_from: tosca.nodes.nfv.Vdu.Compute',
      '  company.provider.Vdu:\n    derived_from: company.provider.Vdu2\n  company.provider.Vdu2:\n    derived_from: company.provider.Vdu',
    );
    await rejects(files, {
      message: 'derives from itself (company.provider.Vdu -> company.provider.Vdu2 -> company.provider.Vdu)',
      where: `${TYPES}: node_types.company.provider.Vdu`,
    });
  });

  it('refuses a node template of a type no imported file defines', async () => {
    await rejects(edit(DF, '      type: company.provider.Vdu\n', '      type: company.provider.Unknown\n'), {
      message: 'node template VDU2 has type company.provider.Unknown, which no imported file defines',
      where: `${DF}: topology_template.node_templates.VDU2.type`,
    });
  });

  it('refuses a VNFD without a node derived from tosca.nodes.nfv.VNF', async () => {
    const files = edit(TOP, / {2}node_templates:\n {4}VNF:[\s\S]*$/, '  node_templates: {}\n');
    const noVnf = edit(DF, / {4}VNF:\n {6}type: company.provider.VNF\n[\s\S]*?(?=\n {4}VDU1:)/, '', files);
    await rejects(noVnf, {
      message: 'no node template is of a type derived from tosca.nodes.nfv.VNF; the VNFD has no VNF node',
      where: TOP,
    });
  });

  it('refuses a VNFD without a deployment flavour (no substitution_mappings)', async () => {
    await rejects(edit(DF, / {2}substitution_mappings:\n[\s\S]*?(?=\n {2}node_templates:)/, ''), {
      message: 'no deployment flavour: no topology_template has substitution_mappings for a type derived from tosca.nodes.nfv.VNF with properties.flavour_id',
      where: TOP,
    });
  });

  it('refuses substitution_mappings without a flavour_id', async () => {
    await rejects(edit(DF, '    properties:\n      flavour_id: simple\n', ''), {
      message: 'substitution_mappings has no properties.flavour_id; a deployment flavour is named by it',
      where: `${DF}: topology_template.substitution_mappings`,
    });
  });

  for (const [property, field] of [
    ['descriptor_id', 'vnfdId'],
    ['provider', 'vnfProvider'],
    ['descriptor_version', 'vnfdVersion'],
  ] as const) {
    it(`refuses a VNF without ${property} (${field}) on the node or its types`, async () => {
      const onType = new RegExp(`      ${property}:\\n        type: string\\n(        constraints: .*\\n)?(        default: .*\\n)?`);
      let files = edit(TYPES, onType, `      ${property}:\n        type: string\n`);
      if (BASE_FILES[TOP]?.includes(`        ${property}: `)) files = edit(TOP, new RegExp(`        ${property}: .*\\n`), '', files);
      await rejects(files, {
        message: `the VNF has no ${property}: neither node template VNF nor its type company.provider.VNF (or a type it derives from) gives it a value`,
        where: `${TOP}: topology_template.node_templates.VNF.properties.${property}`,
      });
    });
  }

  it('refuses a version that YAML reads as a number, as tosca-parser does', async () => {
    await rejects(edit(TYPES, "constraints: [ equal: '1.0' ]", 'constraints: [ equal: 1.0 ]'), {
      message: "descriptor_version is number 1; it must be a non-empty string (quote values such as '1.0')",
      where: `${TOP}: topology_template.node_templates.VNF.properties.descriptor_version`,
    });
  });
});

describe('parseVnfd: nodes, requirements, policies and artifacts', () => {
  it('refuses a VDU whose software image artifact is not in the package', async () => {
    await rejects(without('Files/images/cirros-0.5.2-x86_64-disk.img'), {
      message:
        'artifact sw_image names ../Files/images/cirros-0.5.2-x86_64-disk.img, which is not in the package (looked for Files/images/cirros-0.5.2-x86_64-disk.img)',
      where: `${DF}: topology_template.node_templates.VDU1.artifacts.sw_image.file`,
    });
  });

  it('refuses an artifact outside the package, absolute, or a URL', async () => {
    const file = '          file: ../Scripts/sample_script.py';
    await rejects(edit(DF, file, '          file: ../../sample_script.py'), {
      message: 'artifact sample-script names ../../sample_script.py, which is outside the package',
      where: `${DF}: topology_template.node_templates.VNF.artifacts.sample-script.file`,
    });
    await rejects(edit(DF, file, '          file: /opt/stack/sample_script.py'), {
      message: 'artifact sample-script names /opt/stack/sample_script.py, an absolute path; artifacts are paths relative to the file declaring them',
      where: `${DF}: topology_template.node_templates.VNF.artifacts.sample-script.file`,
    });
    await rejects(edit(DF, file, '          file: http://example.com/sample_script.py'), {
      message: 'artifact sample-script names http://example.com/sample_script.py, a URL; artifacts must be files in the package',
      where: `${DF}: topology_template.node_templates.VNF.artifacts.sample-script.file`,
    });
  });

  it('finds an artifact from the package root when it is not next to the declaring file (Tacker v1 packages)', async () => {
    const vnfd = await parse(edit(DF, '          file: ../Scripts/sample_script.py', '          file: Scripts/sample_script.py'));
    assert.equal(vnfd.flavours[0]?.lcmOperations.instantiate_start?.artifact?.file, 'Scripts/sample_script.py');
  });

  it('refuses a software image artifact without sw_image_data, and two image artifacts on one node', async () => {
    await rejects(edit(DF, / {8}sw_image_data:\n {10}name: VirtualStorage-image\n[\s\S]*? {10}size: 500 MiB\n/, ''), {
      message: 'VirtualStorage has the software image artifact sw_image but no properties.sw_image_data describing it',
      where: `${DF}: topology_template.node_templates.VirtualStorage.properties`,
    });
    await rejects(
      edit(
        DF,
        '        sw_image: ../Files/images/storage.img\n',
        '        sw_image: ../Files/images/storage.img\n        sw_image2: ../Files/images/storage.img\n',
      ),
      {
        message: 'VirtualStorage has 2 software image artifacts; a node has at most one',
        where: `${DF}: topology_template.node_templates.VirtualStorage.artifacts`,
      },
    );
  });

  it('refuses a software image without min_disk, and sizes that are not sizes', async () => {
    await rejects(edit(DF, '          min_disk: 2 GiB\n', ''), {
      message: 'sw_image_data has no min_disk; a software image in the package needs it',
      where: `${DF}: topology_template.node_templates.VirtualStorage.properties.sw_image_data`,
    });
    await rejects(edit(DF, '          min_ram: 256 MB', '          min_ram: 256 megabytes'), {
      message: 'min_ram is "256 megabytes"; it must be a size such as "512 MB" or "1 GiB"',
      where: `${DF}: topology_template.node_templates.VDU1.properties.sw_image_data.min_ram`,
    });
  });

  it('refuses a requirement naming a node that does not exist', async () => {
    await rejects(edit(DF, '        - virtual_link: internalVL1\n', '        - virtual_link: internalVL9\n'), {
      message: 'requirement virtual_link of VDU1_CP2 names internalVL9, which is not a node template of this topology',
      where: `${DF}: topology_template.node_templates.VDU1_CP2.requirements[1].virtual_link`,
    });
    await rejects(edit(DF, '        - virtual_storage: VirtualStorage', '        - virtual_storage: constructor'), {
      message: 'requirement virtual_storage of VDU2 names constructor, which is not a node template of this topology',
      where: `${DF}: topology_template.node_templates.VDU2.requirements[0].virtual_storage`,
    });
  });

  it('refuses a requirement naming a node of the wrong kind', async () => {
    await rejects(edit(DF, '        - virtual_link: internalVL1\n', '        - virtual_link: VDU2\n'), {
      message: 'virtual_link of VDU1_CP2 names VDU2, which is not a VnfVirtualLink node',
      where: `${DF}: topology_template.node_templates.VDU1_CP2.requirements[1].virtual_link`,
    });
  });

  it('refuses policy targets and group members that do not exist', async () => {
    await rejects(edit(DF, '        targets: [ VDU1 ]\n\n    - VDU2_initial_delta', '        targets: [ VDU9 ]\n\n    - VDU2_initial_delta'), {
      message: 'policy VDU1_initial_delta targets VDU9, which is neither a node template nor a group of this topology',
      where: `${DF}: topology_template.policies[1].VDU1_initial_delta.targets[0]`,
    });
    await rejects(edit(DF, '      members: [ VDU1, VDU2 ]', '      members: [ VDU1, VDU3 ]'), {
      message: 'group affinityOrAntiAffinityGroup1 has the member VDU3, which is not a node template of this topology',
      where: `${DF}: topology_template.groups.affinityOrAntiAffinityGroup1.members[1]`,
    });
  });

  it('refuses instantiation levels the InstantiationLevels policy does not define', async () => {
    await rejects(
      edit(
        DF,
        '            instantiation_level_2:\n              number_of_instances: 3',
        '            instantiation_level_3:\n              number_of_instances: 3',
      ),
      {
        message: 'uses the instantiation level instantiation_level_3, which the InstantiationLevels policy does not define',
        where: `${DF}: topology_template.policies[6].VDU1_instantiation_levels.properties.levels.instantiation_level_3`,
      },
    );
    await rejects(edit(DF, '          default_level: instantiation_level_1', '          default_level: instantiation_level_9'), {
      message: 'default_level instantiation_level_9 is not one of the levels (instantiation_level_1, instantiation_level_2)',
      where: `${DF}: topology_template.policies[5].instantiation_levels.properties.default_level`,
    });
  });

  it('refuses a vdu_profile whose minimum exceeds its maximum', async () => {
    await rejects(
      edit(DF, 'min_number_of_instances: 1\n          max_number_of_instances: 3', 'min_number_of_instances: 4\n          max_number_of_instances: 3'),
      {
        message: 'min_number_of_instances (4) is more than max_number_of_instances (3)',
        where: `${DF}: topology_template.node_templates.VDU1.properties.vdu_profile`,
      },
    );
  });

  it('refuses a Vnflcm operation naming an artifact the VNF node does not declare', async () => {
    await rejects(
      edit(DF, '          terminate_end:\n            implementation: sample-script', '          terminate_end:\n            implementation: missing-script'),
      {
        message: 'Vnflcm.terminate_end names the artifact missing-script, which VNF does not declare',
        where: `${DF}: topology_template.node_templates.VNF.interfaces.Vnflcm.terminate_end.implementation`,
      },
    );
  });

  it('keeps VNFD names such as "__proto__" as data, never touching Object.prototype', async () => {
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    let files = edit(
      DF,
      '            instantiation_level_2:\n              description: Largest size',
      '            __proto__:\n              description: Largest size',
    );
    files = edit(
      DF,
      '            instantiation_level_2:\n              number_of_instances: 3',
      '            __proto__:\n              number_of_instances: 3',
      files,
    );
    files = edit(
      DF,
      '            instantiation_level_2:\n              number_of_instances: 2',
      '            __proto__:\n              number_of_instances: 2',
      files,
    );
    files = edit(DF, '          instantiate_end: []', '          __proto__: []', files);
    const flavour = (await parse(files)).flavours[0];
    assert.ok(flavour);
    assert.deepEqual(Object.keys(flavour.instantiationLevels.levels), ['instantiation_level_1', '__proto__']);
    assert.deepEqual(Object.entries(flavour.vduInstantiationLevels.VDU1 ?? {}), [
      ['instantiation_level_1', 1],
      ['__proto__', 3],
    ]);
    assert.equal(Object.getPrototypeOf(flavour.vduInstantiationLevels.VDU1), Object.prototype);
    assert.ok(Object.hasOwn(flavour.lcmOperations, '__proto__'));

    // A VDU named __proto__: `levels[vdu] ??= {}` would have written the levels onto Object.prototype.
    const renamed = (await parse({ ...BASE_FILES, [DF]: df.replaceAll('VDU2', '__proto__') })).flavours[0];
    assert.ok(renamed);
    assert.deepEqual(
      renamed.vdus.map((vdu) => vdu.id),
      ['VDU1', '__proto__'],
    );
    assert.ok(Object.hasOwn(renamed.vduInstantiationLevels, '__proto__'));
    assert.deepEqual({ ...Object.getOwnPropertyDescriptor(renamed.vduInstantiationLevels, '__proto__') }.value, {
      instantiation_level_1: 1,
      instantiation_level_2: 2,
    });
    assert.deepEqual(Object.entries(renamed.vduInitialDeltas), [
      ['VDU1', 1],
      ['__proto__', 1],
    ]);
    assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), before);
  });

  it('refuses a VDU without a name', async () => {
    await rejects(edit(DF, '        name: VDU2\n', ''), {
      message: "the name of VDU VDU2 is missing; it must be a non-empty string (quote values such as '1.0')",
      where: `${DF}: topology_template.node_templates.VDU2.properties.name`,
    });
  });
});

describe('parseVnfd: safe YAML', () => {
  it('refuses a file without tosca_definitions_version', async () => {
    await rejects(edit(TYPES, 'tosca_definitions_version: tosca_simple_yaml_1_2\n', ''), {
      message: 'has no tosca_definitions_version; it is not a TOSCA file',
      where: TYPES,
    });
  });

  it('refuses unparsable YAML, naming the line', async () => {
    const files = edit(DF, '        layer_protocols: [ ipv4, ipv6 ]', '        layer_protocols: [ ipv4, ipv6');
    await rejects(files, {
      message: 'is not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
      // The parser notices the unclosed list on the line after it.
      where: `${DF}:${lineOf(files[DF], 'layer_protocols: [ ipv4, ipv6') + 1}`,
    });
  });

  it('refuses a file that is not a mapping', async () => {
    await rejects({ ...BASE_FILES, [TOP]: '- just\n- a list\n' }, { message: 'is a list; a TOSCA file is a mapping', where: TOP });
  });

  it('refuses duplicate keys', async () => {
    const files = edit(DF, '        name: VDU2\n', '        name: VDU2\n        name: VDU3\n');
    await rejects(files, { message: 'has the key "name" twice in one mapping', where: `${DF}:${lineOf(files[DF], 'name: VDU3')}` });
  });

  it('refuses custom and explicit non-core tags', async () => {
    const line = lineOf(df, 'name: VDU2');
    await rejects(edit(DF, '        name: VDU2\n', '        name: !vendor VDU2\n'), {
      message: 'uses the YAML tag !vendor; a VNFD is plain YAML without tags',
      where: `${DF}:${line}`,
    });
    await rejects(edit(DF, '        name: VDU2\n', '        name: !!binary VkRVMg==\n'), {
      message: 'uses the YAML tag tag:yaml.org,2002:binary; a VNFD is plain YAML without tags',
      where: `${DF}:${line}`,
    });
  });

  it('refuses more than one YAML document in a file', async () => {
    await rejects({ ...BASE_FILES, [TYPES]: `${types}---\nmore: stuff\n` }, { message: 'holds 2 YAML documents; a VNFD file holds one', where: TYPES });
  });

  it('refuses an alias bomb quickly', async () => {
    let bomb = 'tosca_definitions_version: tosca_simple_yaml_1_2\nlol0: &lol0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
    for (let level = 1; level <= 8; level += 1)
      bomb += `lol${level}: &lol${level} [${Array(9)
        .fill(`*lol${level - 1}`)
        .join(', ')}]\n`;
    const started = performance.now();
    await rejects({ ...BASE_FILES, [TYPES]: bomb }, { message: 'expands YAML aliases beyond the limit (an alias bomb?)', where: TYPES });
    assert.ok(performance.now() - started < 1000, 'the alias bomb took more than a second to refuse');
  });

  it('refuses more aliases than the limit', async () => {
    const many = `tosca_definitions_version: tosca_simple_yaml_1_2\nanchor: &a x\nitems: [${Array(VNFD_LIMITS.maxAliases + 1)
      .fill('*a')
      .join(', ')}]\n`;
    await rejects({ ...BASE_FILES, [TYPES]: many }, { message: `uses more than ${VNFD_LIMITS.maxAliases} YAML aliases`, where: `${TYPES}:3` });
  });

  it('refuses too-deep nesting, in flow style, block style and through aliases', async () => {
    const flow = `tosca_definitions_version: tosca_simple_yaml_1_2\ndeep: ${'['.repeat(65)}${']'.repeat(65)}\n`;
    await rejects({ ...BASE_FILES, [TYPES]: flow }, { message: 'nests YAML collections more than 64 levels deep', where: `${TYPES}:2` });

    const block = `tosca_definitions_version: tosca_simple_yaml_1_2\n${Array.from({ length: 65 }, (_, level) => `${'  '.repeat(level)}k${level}:`).join('\n')} leaf\n`;
    // The document is level 1, so the mapping holding k64 (line 66) is level 65.
    await rejects(
      { ...BASE_FILES, [TYPES]: block },
      { message: 'nests YAML collections more than 64 levels deep', where: `${TYPES}:${lineOf(block, 'k64:')}` },
    );
    assert.equal(lineOf(block, 'k64:'), 66);

    const nested = `${'['.repeat(40)}x${']'.repeat(40)}`;
    const aliased = `tosca_definitions_version: tosca_simple_yaml_1_2\na: &a ${nested}\nb: ${'['.repeat(40)}*a${']'.repeat(40)}\n`;
    await rejects({ ...BASE_FILES, [TYPES]: aliased }, { message: 'nests YAML collections more than 64 levels deep once aliases are expanded', where: TYPES });

    await rejects(
      { ...BASE_FILES, [TYPES]: 'tosca_definitions_version: tosca_simple_yaml_1_2\na: &a [ *a, *a ]\n' },
      {
        message: 'nests YAML collections more than 64 levels deep once aliases are expanded',
        where: TYPES,
      },
    );
  });

  it('refuses pathological nesting in milliseconds, before the YAML composer recurses', () => {
    const started = performance.now();
    assert.throws(() => parseSafeYaml('['.repeat(1_000_000), 'x.yaml'), /more than 64 levels deep/);
    assert.throws(() => parseSafeYaml(`${'- '.repeat(1_000_000)}x\n`, 'x.yaml'), /indented more than 1024 columns deep/);
    assert.ok(performance.now() - started < 1000, 'refusing deep nesting took more than a second');
  });

  it('refuses a file larger than the limit', async () => {
    const big = `tosca_definitions_version: tosca_simple_yaml_1_2\ndescription: ${'x'.repeat(VNFD_LIMITS.maxFileBytes)}\n`;
    await rejects(
      { ...BASE_FILES, [TYPES]: big },
      {
        message: `is ${Buffer.byteLength(big)} bytes; a VNFD file may have at most ${VNFD_LIMITS.maxFileBytes} bytes`,
        where: TYPES,
      },
    );
  });

  it('keeps a "__proto__" key as data', () => {
    const value = parseSafeYaml('__proto__: { polluted: true }\n', 'x.yaml') as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.deepEqual(Object.keys(value), ['__proto__']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('parses the shipped SOL001 files, which define the VNFD node types', () => {
    for (const name of SOL001_TYPE_FILES) {
      const doc = parseSafeYaml(SHIPPED[name] as string, name) as Record<string, Record<string, unknown>>;
      assert.equal(doc.tosca_definitions_version, 'tosca_simple_yaml_1_2');
      assert.match(String(doc.description), /version 2\.6\.1/);
    }
    const vnfd = parseSafeYaml(SHIPPED['etsi_nfv_sol001_vnfd_types.yaml'] as string, 'x') as { node_types: Record<string, unknown> };
    assert.deepEqual(Object.keys(vnfd.node_types), [
      'tosca.nodes.nfv.VNF',
      'tosca.nodes.nfv.VnfExtCp',
      'tosca.nodes.nfv.Vdu.Compute',
      'tosca.nodes.nfv.Vdu.VirtualBlockStorage',
      'tosca.nodes.nfv.Vdu.VirtualObjectStorage',
      'tosca.nodes.nfv.Vdu.VirtualFileStorage',
      'tosca.nodes.nfv.VduCp',
      'tosca.nodes.nfv.VnfVirtualLink',
    ]);
  });
});

describe('sizeInBytes', () => {
  it('reads TOSCA scalar-unit.size in decimal and binary units, case-insensitively', () => {
    assert.equal(sizeInBytes('512 MB'), 512_000_000);
    assert.equal(sizeInBytes('1 GiB'), 1_073_741_824);
    assert.equal(sizeInBytes('0 GB'), 0);
    assert.equal(sizeInBytes('1.5 kB'), 1500);
    assert.equal(sizeInBytes('2 tib'), 2 * 2 ** 40);
    assert.equal(sizeInBytes('10B'), 10);
  });

  it('refuses what is not a size', () => {
    for (const text of ['512', 'MB', '1 GBs', '-1 GB', '1 constructor', '']) assert.equal(sizeInBytes(text), undefined, text);
  });
});
