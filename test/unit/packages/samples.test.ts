// The sample VNF packages (samples/packages/, built by test/support/csar-builder.ts): their entries,
// manifest and TOSCA.meta hashes, VNFD identity and structure, the generated image's checksum, the
// builder's mutation hooks, the streaming large-package build and scripts/build-samples.ts.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parse } from 'yaml';
import yauzl from 'yauzl';
import {
  buildCsar,
  buildCsarFile,
  SAMPLE_PACKAGE_NAMES,
  SAMPLE_PACKAGES,
  SAMPLE_VNFD_IDS,
  sampleImage,
  sampleImageDigests,
  SOL001_DIR,
  SOL001_FILES,
  TOSCA_META_PATH,
  type SamplePackageName,
} from '../../support/csar-builder.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MIB = 2 ** 20;
const ZIP_STORE = 0;
const ZIP_DEFLATE = 8;

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

interface ZipEntry {
  content: Buffer;
  compressionMethod: number;
  compressedSize: number;
}

async function unzip(csar: Buffer): Promise<Map<string, ZipEntry>> {
  const zip = await yauzl.fromBufferPromise(csar, { lazyEntries: true });
  const entries = new Map<string, ZipEntry>();
  for await (const entry of zip.eachEntry()) {
    const chunks: Buffer[] = [];
    for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
    entries.set(entry.fileName, { content: Buffer.concat(chunks), compressionMethod: entry.compressionMethod, compressedSize: entry.compressedSize });
  }
  return entries;
}

function text(entries: Map<string, ZipEntry>, path: string): string {
  const entry = entries.get(path);
  assert.ok(entry, `${path} is in the CSAR`);
  return entry.content.toString('utf8');
}

type Yaml = any;
function yamlOf(entries: Map<string, ZipEntry>, path: string): Yaml {
  return parse(text(entries, path));
}

function sha(algorithm: 'sha256' | 'sha512', content: Buffer): string {
  return createHash(algorithm).update(content).digest('hex');
}

/** Blocks of `Key: value` lines separated by blank lines. */
function blocks(source: string): Array<Record<string, string>> {
  return source
    .split(/\r?\n[ \t]*\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) =>
      Object.fromEntries(
        block
          .split(/\r?\n/)
          .filter((line) => line.trim() !== '')
          .map((line) => {
            const colon = line.indexOf(':');
            return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
          }),
      ),
    );
}

/** Policies of a flavour as name -> policy (TOSCA writes them as a list of one-key maps). */
function policiesOf(df: Yaml): Record<string, Yaml> {
  return Object.assign({}, ...df.topology_template.policies);
}

const SOL001 = SOL001_FILES.map((file) => `Definitions/${file}`);
const EXPECTED_ENTRIES: Record<SamplePackageName, string[]> = {
  'openstack-vnf-v1': [
    TOSCA_META_PATH,
    'BaseHOT/large/nested/VDU1.yaml',
    'BaseHOT/large/sample_hot_large.yaml',
    'BaseHOT/simple/nested/VDU1.yaml',
    'BaseHOT/simple/sample_hot.yaml',
    ...SOL001,
    'Definitions/sample_vnfd_df_large.yaml',
    'Definitions/sample_vnfd_df_simple.yaml',
    'Definitions/sample_vnfd_top.yaml',
    'Definitions/sample_vnfd_types.yaml',
    'Files/images/cirros-0.5.2-x86_64-disk.img',
    'Scripts/coordinate_vnf.py',
    'Scripts/sample_script.py',
    'manifest.mf',
  ],
  'openstack-vnf-v2': [
    TOSCA_META_PATH,
    'BaseHOT/simple/nested/VDU1.yaml',
    'BaseHOT/simple/sample_hot.yaml',
    ...SOL001,
    'Definitions/sample_vnfd_df_simple.yaml',
    'Definitions/sample_vnfd_top.yaml',
    'Definitions/sample_vnfd_types.yaml',
    'Files/images/cirros-0.6.2-x86_64-disk.img',
    'Scripts/coordinate_lb.js',
    'Scripts/coordinate_vnf.py',
    'Scripts/sample_script.py',
    'manifest.mf',
  ],
  'k8s-cnf-v1': [
    TOSCA_META_PATH,
    ...SOL001,
    'Definitions/sample_cnf_df_large.yaml',
    'Definitions/sample_cnf_df_simple.yaml',
    'Definitions/sample_cnf_top.vnfd.yaml',
    'Definitions/sample_cnf_types.yaml',
    'Files/kubernetes/deployment.yaml',
    'Files/kubernetes/large/cache.yaml',
    'Files/kubernetes/large/deployment.yaml',
    'Files/kubernetes/large/service.yaml',
    'Files/kubernetes/service.yaml',
    'manifest.mf',
  ],
  'k8s-cnf-v2': [
    TOSCA_META_PATH,
    'Definitions/sample_cnf_df_simple.yaml',
    'Definitions/sample_cnf_top.vnfd.yaml',
    'Definitions/sample_cnf_types.yaml',
    'Files/kubernetes/deployment.yaml',
    'Files/kubernetes/service.yaml',
    'Scripts/coordinate_cnf.js',
    'manifest.mf',
  ],
};

/** The flavour file of a sample: the top VNFD's imports that are neither SOL001 nor the types file. */
function flavourFiles(entries: Map<string, ZipEntry>, name: SamplePackageName): string[] {
  const top = yamlOf(entries, SAMPLE_PACKAGES[name].entryDefinitions);
  return (top.imports as string[]).filter((file) => /_df_/.test(file)).map((file) => `Definitions/${file}`);
}

function typesFile(entries: Map<string, ZipEntry>, name: SamplePackageName): string {
  const top = yamlOf(entries, SAMPLE_PACKAGES[name].entryDefinitions);
  const file = (top.imports as string[]).find((entry) => /_types\.yaml$/.test(entry) && !entry.startsWith('etsi_nfv_sol001'));
  assert.ok(file, 'the top VNFD imports a types file');
  return `Definitions/${file}`;
}

const built = new Map<SamplePackageName, { csar: Buffer; entries: Map<string, ZipEntry> }>();
before(async () => {
  for (const name of SAMPLE_PACKAGE_NAMES) {
    const csar = await buildCsar(name);
    built.set(name, { csar, entries: await unzip(csar) });
  }
});
const entriesOf = (name: SamplePackageName) => built.get(name)!.entries;

describe('sample packages: every sample', () => {
  it('has four samples with distinct fixed vnfdIds', () => {
    assert.deepEqual(SAMPLE_PACKAGE_NAMES, ['openstack-vnf-v1', 'openstack-vnf-v2', 'k8s-cnf-v1', 'k8s-cnf-v2']);
    const ids = Object.values(SAMPLE_VNFD_IDS);
    assert.equal(new Set(ids).size, 4);
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  for (const name of SAMPLE_PACKAGE_NAMES) {
    describe(name, () => {
      const sample = SAMPLE_PACKAGES[name];

      it('lists the expected entries, TOSCA.meta first', () => {
        assert.deepEqual([...entriesOf(name).keys()], EXPECTED_ENTRIES[name]);
      });

      it('has a TOSCA.meta naming its entry definitions and manifest (SOL004 layout)', () => {
        const [head] = blocks(text(entriesOf(name), TOSCA_META_PATH));
        assert.deepEqual(head, {
          'TOSCA-Meta-File-Version': '1.0',
          'CSAR-Version': '1.1',
          'Created-by': 'Serverless VNFM samples',
          'Entry-Definitions': sample.entryDefinitions,
          'ETSI-Entry-Manifest': 'manifest.mf',
        });
        assert.ok(entriesOf(name).has(sample.entryDefinitions));
      });

      it('has a manifest with its metadata and a matching SHA-256 for every other file', () => {
        const entries = entriesOf(name);
        const [metadata, ...artifacts] = blocks(text(entries, 'manifest.mf'));
        const { vnf_release_date_time: released, ...identity } = metadata!;
        assert.deepEqual(identity, {
          metadata: '',
          vnf_provider_id: sample.provider,
          vnf_product_name: sample.productName,
          vnf_package_version: sample.softwareVersion,
        });
        assert.match(released ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
        const listed = artifacts;
        assert.deepEqual(
          listed.map((block) => block.Source),
          [...entries.keys()].filter((path) => path !== 'manifest.mf').sort(),
        );
        for (const block of listed) {
          assert.equal(block.Algorithm, 'SHA-256');
          assert.equal(block.Hash, sha('sha256', entries.get(block.Source!)!.content), `hash of ${block.Source}`);
        }
      });

      it('has a VNFD whose identity matches SAMPLE_PACKAGES', () => {
        const entries = entriesOf(name);
        const vnf = yamlOf(entries, sample.entryDefinitions).topology_template.node_templates.VNF;
        assert.equal(vnf.type, 'company.provider.VNF');
        assert.deepEqual(vnf.properties, {
          flavour_id: { get_input: 'selected_flavour' },
          descriptor_id: sample.vnfdId,
          provider: sample.provider,
          product_name: sample.productName,
          software_version: sample.softwareVersion,
          descriptor_version: sample.vnfdVersion,
          vnfm_info: ['Tacker'],
        });
        const type = yamlOf(entries, typesFile(entries, name)).node_types['company.provider.VNF'];
        assert.equal(type.derived_from, 'tosca.nodes.nfv.VNF');
        const only = (property: string) => type.properties[property].constraints[0].valid_values;
        assert.deepEqual(only('descriptor_id'), [sample.vnfdId]);
        assert.deepEqual(only('provider'), [sample.provider]);
        assert.deepEqual(only('product_name'), [sample.productName]);
        assert.deepEqual(only('software_version'), [sample.softwareVersion]);
        assert.deepEqual(only('descriptor_version'), [sample.vnfdVersion]);
        assert.deepEqual(only('flavour_id'), sample.flavourIds);
        assert.equal(type.interfaces.Vnflcm.type, 'tosca.interfaces.nfv.Vnflcm');
        const flavours = flavourFiles(entries, name).map((file) => yamlOf(entries, file).topology_template.substitution_mappings);
        assert.deepEqual(
          flavours.map((mapping) => mapping.properties.flavour_id),
          sample.flavourIds,
        );
        for (const mapping of flavours) assert.equal(mapping.node_type, 'company.provider.VNF');
      });

      it('bundles the SOL001 type files from lib/packages/sol001 unless it leaves them to the VNFM', async () => {
        const entries = entriesOf(name);
        for (const file of SOL001_FILES) {
          const entry = entries.get(`Definitions/${file}`);
          if (sample.bundlesSol001) assert.deepEqual(entry?.content, await readFile(join(SOL001_DIR, file)));
          else assert.equal(entry, undefined);
        }
        for (const file of yamlOf(entries, sample.entryDefinitions).imports as string[]) {
          assert.ok(entries.has(`Definitions/${file}`) || (!sample.bundlesSol001 && (SOL001_FILES as readonly string[]).includes(file)), `import ${file}`);
        }
      });

      it('lists its artifacts in SAMPLE_PACKAGES', () => {
        const artifacts = [...entriesOf(name).keys()].filter((path) => path !== TOSCA_META_PATH && path !== 'manifest.mf' && !path.startsWith('Definitions/'));
        assert.deepEqual(artifacts.sort(), [...sample.artifactPaths].sort());
      });

      it('deflates text files and stores images', () => {
        for (const [path, entry] of entriesOf(name)) {
          assert.equal(entry.compressionMethod, path.endsWith('.img') ? ZIP_STORE : ZIP_DEFLATE, path);
        }
      });

      it('builds to the same bytes every time', async () => {
        assert.ok((await buildCsar(name)).equals(built.get(name)!.csar));
      });
    });
  }
});

describe('sample packages: OpenStack VNFs', () => {
  for (const name of ['openstack-vnf-v1', 'openstack-vnf-v2'] as const) {
    describe(name, () => {
      const sample = SAMPLE_PACKAGES[name];
      const image = sample.image!;

      it('carries the generated image, whose SHA-512 is the one hard-coded in the VNFD', async () => {
        const entries = entriesOf(name);
        const content = entries.get(image.path)!.content;
        assert.equal(content.length, 1 * MIB);
        assert.ok(content.equals(sampleImage(image.seed, image.bytes)));
        const digest = sha('sha512', content);
        assert.equal(digest, image.sha512, 'SAMPLE_PACKAGES image.sha512 matches the generated image');
        assert.equal((await sampleImageDigests(image.seed, image.bytes)).sha512, digest);
        const nodes = yamlOf(entries, 'Definitions/sample_vnfd_df_simple.yaml').topology_template.node_templates;
        for (const node of ['VDU1', 'VirtualStorage']) {
          const data = nodes[node].properties.sw_image_data;
          assert.deepEqual(data.checksum, { algorithm: 'sha-512', hash: digest }, `${node} sw_image_data.checksum`);
          assert.equal(data.size, '1 MiB');
          assert.equal(data.version, image.version);
          assert.equal(nodes[node].artifacts.sw_image.type, 'tosca.artifacts.nfv.SwImage');
          assert.equal(nodes[node].artifacts.sw_image.file, `../${image.path}`);
        }
      });

      it('describes VDU1, VDU2 with its storage, the connection points, the internal VL and the policies', () => {
        const entries = entriesOf(name);
        const df = yamlOf(entries, 'Definitions/sample_vnfd_df_simple.yaml');
        const nodes = df.topology_template.node_templates;
        assert.equal(nodes.VDU1.type, 'tosca.nodes.nfv.Vdu.Compute');
        assert.deepEqual(nodes.VDU1.properties.vdu_profile, { min_number_of_instances: 1, max_number_of_instances: 3 });
        assert.equal(nodes.VDU2.type, 'tosca.nodes.nfv.Vdu.Compute');
        assert.deepEqual(nodes.VDU2.requirements, [{ virtual_storage: 'VirtualStorage' }]);
        assert.equal(nodes.VirtualStorage.type, 'tosca.nodes.nfv.Vdu.VirtualBlockStorage');
        assert.deepEqual(nodes.VDU1_CP1.requirements, [{ virtual_binding: 'VDU1' }]);
        assert.deepEqual(nodes.VDU1_CP2.requirements, [{ virtual_binding: 'VDU1' }, { virtual_link: 'internalVL1' }]);
        assert.deepEqual(nodes.VDU2_CP2.requirements, [{ virtual_binding: 'VDU2' }, { virtual_link: 'internalVL1' }]);
        assert.equal(nodes.internalVL1.type, 'tosca.nodes.nfv.VnfVirtualLink');
        assert.deepEqual(df.topology_template.substitution_mappings.requirements, { virtual_link_external: ['VDU1_CP1', 'virtual_link'] });

        const policies = policiesOf(df);
        assert.deepEqual(policies.scaling_aspects.properties.aspects.VDU1_scale.max_scale_level, 2);
        assert.equal(policies.VDU1_scaling_aspect_deltas.type, 'tosca.policies.nfv.VduScalingAspectDeltas');
        assert.equal(policies.VDU1_initial_delta.type, 'tosca.policies.nfv.VduInitialDelta');
        assert.deepEqual(Object.keys(policies.instantiation_levels.properties.levels), ['instantiation_level_1', 'instantiation_level_2']);
        assert.equal(policies.instantiation_levels.properties.default_level, 'instantiation_level_1');
        assert.equal(policies.VDU1_instantiation_levels.type, 'tosca.policies.nfv.VduInstantiationLevels');
        assert.equal(policies.anti_affinity_rule.type, 'tosca.policies.nfv.AntiAffinityRule');
        assert.deepEqual(policies.anti_affinity_rule.targets, ['VDU1', 'VDU2']);
      });

      it('points its Vnflcm operations at scripts in Scripts/', () => {
        const entries = entriesOf(name);
        const vnf = yamlOf(entries, 'Definitions/sample_vnfd_df_simple.yaml').topology_template.node_templates.VNF;
        const operations = vnf.interfaces.Vnflcm;
        assert.deepEqual(Object.keys(operations), ['instantiate_start', 'instantiate_end', 'change_current_package']);
        for (const operation of Object.values(operations) as Array<{ implementation: string }>) {
          const file = vnf.artifacts[operation.implementation].file as string;
          assert.match(file, /^\.\.\/Scripts\/.+\.py$/);
          assert.ok(entries.has(file.slice(3)), file);
        }
        assert.equal(vnf.artifacts[operations.change_current_package.implementation].file, '../Scripts/coordinate_vnf.py');
      });

      it('has a Base HOT with VDU1 as an autoscaling group of the nested VDU1.yaml', () => {
        const entries = entriesOf(name);
        const hot = yamlOf(entries, 'BaseHOT/simple/sample_hot.yaml');
        assert.deepEqual(hot.parameters.nfv, { type: 'json' });
        assert.equal(hot.resources.VDU1.type, 'OS::Heat::AutoScalingGroup');
        const member = hot.resources.VDU1.properties.resource;
        assert.equal(member.type, 'VDU1.yaml');
        assert.deepEqual(member.properties.flavor, { get_param: ['nfv', 'VDU', 'VDU1', 'computeFlavourId'] });
        assert.deepEqual(member.properties.image, { get_param: ['nfv', 'VDU', 'VDU1', 'vcImageId'] });
        assert.deepEqual(member.properties.net1, { get_param: ['nfv', 'CP', 'VDU1_CP1', 'network'] });
        assert.equal(hot.resources.VDU2.type, 'OS::Nova::Server');
        assert.equal(hot.resources.VirtualStorage.type, 'OS::Cinder::Volume');
        assert.equal(hot.resources.internalVL1.type, 'OS::Neutron::Net');
        assert.equal(hot.resources.internalVL1_subnet.type, 'OS::Neutron::Subnet');
        const nested = yamlOf(entries, 'BaseHOT/simple/nested/VDU1.yaml');
        assert.equal(nested.resources.VDU1.type, 'OS::Nova::Server');
        assert.equal(nested.resources.VDU1_CP1.type, 'OS::Neutron::Port');
        assert.deepEqual(Object.keys(nested.parameters).sort(), Object.keys(member.properties).sort());
      });
    });
  }

  it('v2 is a new version of the same VNF with another image', () => {
    const [v1, v2] = [SAMPLE_PACKAGES['openstack-vnf-v1'], SAMPLE_PACKAGES['openstack-vnf-v2']];
    assert.notEqual(v1.vnfdId, v2.vnfdId);
    assert.equal(v1.provider, v2.provider);
    assert.equal(v1.productName, v2.productName);
    assert.deepEqual([v1.softwareVersion, v2.softwareVersion], ['1.0', '2.0']);
    assert.notEqual(v1.image!.path, v2.image!.path);
    assert.notEqual(v1.image!.sha512, v2.image!.sha512);
  });

  it("the sample scripts follow Tacker's contract: a pickled dict on stdin, exit status and stderr", (t) => {
    if (spawnSync('python3', ['--version']).status !== 0) return t.skip('python3 is not installed');
    const entries = entriesOf('openstack-vnf-v1');
    // The input is pickled by python3 itself, as the script runner does.
    const run = (script: string, input: unknown) => {
      const program = `import json,pickle,subprocess,sys\nsrc=sys.stdin.read()\nr=subprocess.run([sys.executable,'-c',${JSON.stringify(text(entries, `Scripts/${script}`))}],input=pickle.dumps(json.loads(src)),capture_output=True)\nsys.stdout.write(json.dumps({'code':r.returncode,'stderr':r.stderr.decode()}))`;
      const result = spawnSync('python3', ['-c', program], { input: JSON.stringify(input), encoding: 'utf8' });
      return JSON.parse(result.stdout) as { code: number; stderr: string };
    };
    assert.deepEqual(run('sample_script.py', { operation: 'instantiate_start', request: {}, vnf_instance: { id: 'inst-1' } }), { code: 0, stderr: '' });
    assert.deepEqual(run('sample_script.py', { operation: 'instantiate_end', request: { additionalParams: { sample_script_fail: 'instantiate_end' } } }), {
      code: 1,
      stderr: 'sample_script: instantiate_end failed as requested\n',
    });
    assert.deepEqual(run('coordinate_vnf.py', { cp_name: 'VDU1_CP1', username: 'ubuntu', password: 'x', ssh_ip: '10.0.0.5', is_rollback: false }), {
      code: 0,
      stderr: '',
    });
    assert.deepEqual(run('coordinate_vnf.py', { username: 'fail', is_rollback: true }), {
      code: 1,
      stderr: 'coordinate_vnf: the VNFC refused the coordination\n',
    });
  });
});

describe('sample packages: Kubernetes CNFs', () => {
  const deploymentOf = (name: SamplePackageName) => yamlOf(entriesOf(name), 'Files/kubernetes/deployment.yaml');

  for (const name of ['k8s-cnf-v1', 'k8s-cnf-v2'] as const) {
    describe(name, () => {
      it('names VDU1 after the Deployment, one replica, with a Service in front', () => {
        const entries = entriesOf(name);
        const df = yamlOf(entries, 'Definitions/sample_cnf_df_simple.yaml');
        const vdu = df.topology_template.node_templates.VDU1;
        assert.equal(vdu.type, 'tosca.nodes.nfv.Vdu.Compute');
        assert.deepEqual(vdu.artifacts, undefined, 'no image artifact');
        const deployment = deploymentOf(name);
        assert.equal(deployment.kind, 'Deployment');
        assert.equal(vdu.properties.name, deployment.metadata.name);
        assert.equal(deployment.spec.replicas, 1);
        const service = yamlOf(entries, 'Files/kubernetes/service.yaml');
        assert.equal(service.kind, 'Service');
        assert.deepEqual(service.spec.selector, deployment.spec.template.metadata.labels);
        const policies = policiesOf(df);
        assert.equal(policies.scaling_aspects.type, 'tosca.policies.nfv.ScalingAspects');
        assert.deepEqual(policies.VDU1_initial_delta.properties.initial_delta, { number_of_instances: deployment.spec.replicas });
        assert.deepEqual(policies.VDU1_initial_delta.targets, ['VDU1']);
        assert.deepEqual(SAMPLE_PACKAGES[name].kubernetesFiles, ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml']);
      });

      it('lists its Kubernetes files as TOSCA.meta artifacts with their real hashes', () => {
        const entries = entriesOf(name);
        const artifacts = blocks(text(entries, TOSCA_META_PATH))
          .slice(1)
          .filter((block) => block.Name?.startsWith('Files/kubernetes/'));
        assert.deepEqual(
          artifacts.map((block) => block.Name),
          SAMPLE_PACKAGES[name].kubernetesFiles,
        );
        for (const block of artifacts) {
          assert.equal(block['Content-Type'], 'application/yaml');
          assert.equal(block.Algorithm, 'SHA-256');
          assert.equal(block.Hash, sha('sha256', entries.get(block.Name!)!.content));
        }
      });
    });
  }

  it('v2 is a new version of the same CNF with a new container image tag', () => {
    assert.notEqual(SAMPLE_VNFD_IDS['k8s-cnf-v1'], SAMPLE_VNFD_IDS['k8s-cnf-v2']);
    const [image1, image2] = (['k8s-cnf-v1', 'k8s-cnf-v2'] as const).map((name) => deploymentOf(name).spec.template.spec.containers[0].image as string);
    assert.equal(image1!.split(':')[0], image2!.split(':')[0]);
    assert.notEqual(image1, image2);
  });
});

describe('sample packages: builder options', () => {
  it('computes the manifest after mutate', async () => {
    const entries = await unzip(
      await buildCsar('k8s-cnf-v1', {
        mutate: (files) => files.set('Files/kubernetes/service.yaml', Buffer.from('kind: Service\n')),
      }),
    );
    const service = entries.get('Files/kubernetes/service.yaml')!.content;
    assert.equal(service.toString(), 'kind: Service\n');
    const listed = blocks(text(entries, 'manifest.mf')).find((block) => block.Source === 'Files/kubernetes/service.yaml');
    assert.equal(listed?.Hash, sha('sha256', service));
    const meta = blocks(text(entries, TOSCA_META_PATH)).find((block) => block.Name === 'Files/kubernetes/service.yaml');
    assert.equal(meta?.Hash, sha('sha256', service));
  });

  it('breaks hashes on purpose with mutateAfterManifest', async () => {
    const path = 'Definitions/sample_cnf_df_simple.yaml';
    const entries = await unzip(
      await buildCsar('k8s-cnf-v1', {
        mutateAfterManifest: (files) => files.set(path, Buffer.concat([files.get(path)!, Buffer.from('# tampered\n')])),
      }),
    );
    const listed = blocks(text(entries, 'manifest.mf')).find((block) => block.Source === path);
    assert.notEqual(listed?.Hash, sha('sha256', entries.get(path)!.content));
  });

  it('leaves out the manifest blocks when mutate removes the manifest', async () => {
    const entries = await unzip(await buildCsar('k8s-cnf-v1', { mutate: (files) => files.delete('manifest.mf') }));
    assert.equal(entries.has('manifest.mf'), false);
  });

  it('adds or leaves out the SOL001 files on request', async () => {
    const without = await unzip(await buildCsar('k8s-cnf-v1', { includeSol001: false }));
    assert.equal(without.has(SOL001[0]!), false);
    const withThem = await unzip(await buildCsar('k8s-cnf-v2', { includeSol001: true }));
    assert.equal(withThem.has(SOL001[0]!), true);
  });

  it('follows another image size in the VNFD checksum and size', async () => {
    const image = SAMPLE_PACKAGES['openstack-vnf-v1'].image!;
    const entries = await unzip(await buildCsar('openstack-vnf-v1', { imageBytes: 12345 }));
    const content = entries.get(image.path)!.content;
    assert.equal(content.length, 12345);
    const vdu1 = yamlOf(entries, 'Definitions/sample_vnfd_df_simple.yaml').topology_template.node_templates.VDU1;
    assert.deepEqual(vdu1.properties.sw_image_data.checksum, { algorithm: 'sha-512', hash: sha('sha512', content) });
    assert.equal(vdu1.properties.sw_image_data.size, '12345 B');
  });

  it('rejects unknown samples and image sizes for samples without an image', async () => {
    await assert.rejects(buildCsar('no-such-sample'), /unknown sample package "no-such-sample"/);
    await assert.rejects(buildCsar('k8s-cnf-v1', { imageBytes: 10 }), /has no image/);
  });
});

describe('sample packages: large CSARs on disk', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'csar-builder-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('streams a 100 MiB image into a file of that size without holding it in memory', async () => {
    const imageBytes = 100 * MIB;
    const sample = SAMPLE_PACKAGES['openstack-vnf-v1'];
    const path = join(dir, 'large.zip');
    // Live memory (measured right after a full GC) every few milliseconds while the build runs.
    const live = () => {
      collectGarbage();
      const { arrayBuffers, heapUsed } = process.memoryUsage();
      return arrayBuffers + heapUsed;
    };
    const baseline = live();
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, live());
    }, 10);
    const result = await buildCsarFile('openstack-vnf-v1', path, { imageBytes }).finally(() => clearInterval(sampler));
    const grown = peak - baseline;
    // A few MiB in flight; the margin absorbs array buffers a full GC has not swept yet.
    assert.ok(grown < imageBytes / 2, `live buffers and heap grew by ${(grown / MIB).toFixed(1)} MiB while building a ${imageBytes / MIB} MiB image`);

    assert.equal(result.path, path);
    assert.equal(result.size, (await stat(path)).size);
    assert.ok(result.size > imageBytes && result.size < imageBytes + 256 * 1024, `size ${result.size}`);

    const zip = await yauzl.openPromise(path, { lazyEntries: true });
    try {
      const names: string[] = [];
      let vnfd = '';
      let imageSha512 = '';
      for await (const entry of zip.eachEntry()) {
        names.push(entry.fileName);
        if (entry.fileName === sample.image!.path) {
          assert.equal(entry.compressionMethod, ZIP_STORE);
          assert.equal(entry.uncompressedSize, imageBytes);
          assert.equal(entry.compressedSize, imageBytes);
          const hash = createHash('sha512');
          for await (const chunk of await zip.openReadStreamPromise(entry)) hash.update(chunk as Buffer);
          imageSha512 = hash.digest('hex');
        } else if (entry.fileName === 'Definitions/sample_vnfd_df_simple.yaml') {
          const chunks: Buffer[] = [];
          for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
          vnfd = Buffer.concat(chunks).toString('utf8');
        }
      }
      assert.deepEqual(names, EXPECTED_ENTRIES['openstack-vnf-v1']);
      assert.equal(imageSha512, (await sampleImageDigests(sample.image!.seed, imageBytes)).sha512);
      assert.equal(parse(vnfd).topology_template.node_templates.VDU1.properties.sw_image_data.checksum.hash, imageSha512);
    } finally {
      zip.close();
    }
  });

  it('scripts/build-samples.ts writes every sample and prints the paths', async () => {
    const out = join(dir, 'samples');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/build-samples.ts', out], { cwd: ROOT });
    const paths = stdout.trim().split('\n');
    assert.deepEqual(
      paths,
      SAMPLE_PACKAGE_NAMES.map((name) => join(out, `${name}.zip`)),
    );
    for (const name of SAMPLE_PACKAGE_NAMES) {
      // The same entries as buildCsar's (not the same bytes: a streamed entry's CRC follows its data).
      const entries = await unzip(await readFile(join(out, `${name}.zip`)));
      assert.deepEqual([...entries.keys()], [...entriesOf(name).keys()]);
      for (const [path, entry] of entries) assert.ok(entry.content.equals(entriesOf(name).get(path)!.content), `${name}.zip ${path}`);
    }
  });
});
