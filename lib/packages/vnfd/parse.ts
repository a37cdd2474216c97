// Extraction of a VNFD (ETSI GS NFV-SOL 001 TOSCA YAML) into the model, read the way Tacker reads it:
// the entry file and its imports are loaded defensively (the package is untrusted input), types are
// resolved through derived_from across files, and what onboarding and LCM need is taken per flavour.
import { posix } from 'node:path';
import { isRecord } from '#lib/json.ts';
import { PackageError } from '../errors.ts';
import type {
  ArtifactRef,
  CpInfo,
  ExtCpInfo,
  FlavourInfo,
  LcmOperationInfo,
  ParsedVnfd,
  SoftwareImageInfo,
  StorageInfo,
  SwImage,
  VduInfo,
  VirtualLinkInfo,
  VnfdReader,
} from './model.ts';
import { TypeRegistry, describe, escapesRoot, isAbsolute, isUrl, loadFiles, own, put, yamlPath, type Obj, type ToscaFile } from './tosca.ts';

/** The SOL001 types extraction looks for; a type derived from one counts as it. */
const T = {
  vnf: 'tosca.nodes.nfv.VNF',
  vdu: 'tosca.nodes.nfv.Vdu.Compute',
  blockStorage: 'tosca.nodes.nfv.Vdu.VirtualBlockStorage',
  objectStorage: 'tosca.nodes.nfv.Vdu.VirtualObjectStorage',
  fileStorage: 'tosca.nodes.nfv.Vdu.VirtualFileStorage',
  vduCp: 'tosca.nodes.nfv.VduCp',
  extCp: 'tosca.nodes.nfv.VnfExtCp',
  vl: 'tosca.nodes.nfv.VnfVirtualLink',
  swImage: 'tosca.artifacts.nfv.SwImage',
  placementGroup: 'tosca.groups.nfv.PlacementGroup',
  scalingAspects: 'tosca.policies.nfv.ScalingAspects',
  vduDeltas: 'tosca.policies.nfv.VduScalingAspectDeltas',
  levels: 'tosca.policies.nfv.InstantiationLevels',
  vduLevels: 'tosca.policies.nfv.VduInstantiationLevels',
  vlLevels: 'tosca.policies.nfv.VirtualLinkInstantiationLevels',
  initialDelta: 'tosca.policies.nfv.VduInitialDelta',
  affinity: 'tosca.policies.nfv.AffinityRule',
  antiAffinity: 'tosca.policies.nfv.AntiAffinityRule',
} as const;

// ---------------------------------------------------------------------------------------------
// Checked values

const need = (condition: boolean, message: string, where: string): void => {
  if (!condition) throw new PackageError(message, where);
};

function asString(value: unknown, where: string, what: string): string {
  // TOSCA strings: tosca-parser refuses `version: 1.0` (a float) for a string property, and so do we.
  need(
    typeof value === 'string' && value !== '',
    `${what} is ${value === '' ? 'empty' : describe(value)}; it must be a non-empty string (quote values such as '1.0')`,
    where,
  );
  return value as string;
}

function optString(value: unknown, where: string, what: string): string | undefined {
  return value === undefined || value === null ? undefined : asString(value, where, what);
}

function asCount(value: unknown, where: string, what: string): number {
  need(typeof value === 'number' && Number.isSafeInteger(value) && value >= 0, `${what} is ${describe(value)}; it must be a non-negative integer`, where);
  return value as number;
}

function optCount(value: unknown, where: string, what: string): number | undefined {
  return value === undefined || value === null ? undefined : asCount(value, where, what);
}

function optObj(value: unknown, where: string, what: string): Obj | undefined {
  if (value === undefined || value === null) return undefined;
  need(isRecord(value), `${what} is ${describe(value)}; it must be a mapping`, where);
  return value as Obj;
}

function optList(value: unknown, where: string, what: string): unknown[] | undefined {
  if (value === undefined || value === null) return undefined;
  need(Array.isArray(value), `${what} is ${describe(value)}; it must be a list`, where);
  return value as unknown[];
}

function optStrings(value: unknown, where: string, what: string): string[] | undefined {
  const list = optList(value, where, what);
  return list?.map((item, index) => asString(item, `${where}[${index}]`, `${what}[${index}]`));
}

const SIZE_UNITS = new Map<string, number>([
  ['b', 1],
  ['kb', 1e3],
  ['kib', 2 ** 10],
  ['mb', 1e6],
  ['mib', 2 ** 20],
  ['gb', 1e9],
  ['gib', 2 ** 30],
  ['tb', 1e12],
  ['tib', 2 ** 40],
]);

/** TOSCA scalar-unit.size ("512 MB", "1 GiB") in bytes; units are case-insensitive as TOSCA says. */
export function sizeInBytes(value: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$/i.exec(value);
  const factor = match ? SIZE_UNITS.get((match[2] as string).toLowerCase()) : undefined;
  if (!match || factor === undefined) return undefined;
  const bytes = Math.round(Number(match[1]) * factor);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

function optSize(value: unknown, where: string, what: string): string | undefined {
  const text = optString(value, where, what);
  need(text === undefined || sizeInBytes(text) !== undefined, `${what} is "${text}"; it must be a size such as "512 MB" or "1 GiB"`, where);
  return text;
}

// ---------------------------------------------------------------------------------------------
// Topologies

interface NodeTemplate {
  name: string;
  def: Obj;
  type: string;
  properties: Obj;
  /** YAML path of the node template inside its file. */
  path: string;
}

interface Requirement {
  name: string;
  target: string;
  where: string;
}

/** An artifact as declared; `short` for the `name: file` notation, which Tacker takes for a software image. */
interface DeclaredArtifact extends ArtifactRef {
  def: Obj;
  short: boolean;
}

interface Topology {
  file: ToscaFile;
  template: Obj;
  nodes: Map<string, NodeTemplate>;
  groups: Map<string, { members: string[]; type: string; where: string }>;
}

class VnfdExtractor {
  readonly artifactFiles: string[] = [];

  constructor(
    readonly reader: VnfdReader,
    readonly types: TypeRegistry,
  ) {}

  at(file: ToscaFile, ...segments: Array<string | number>): string {
    return `${file.where}: ${yamlPath(...segments)}`;
  }

  nodeIsA(node: NodeTemplate, base: string): boolean {
    return this.types.isA('node_types', node.type, base);
  }

  topology(file: ToscaFile): Topology | undefined {
    const template = optObj(own(file.doc, 'topology_template'), this.at(file, 'topology_template'), 'topology_template');
    if (!template) return undefined;
    const nodes = new Map<string, NodeTemplate>();
    const nodeTemplates = optObj(own(template, 'node_templates'), this.at(file, 'topology_template', 'node_templates'), 'node_templates') ?? {};
    for (const [name, def] of Object.entries(nodeTemplates)) {
      const path = yamlPath('topology_template', 'node_templates', name);
      const where = `${file.where}: ${path}`;
      need(isRecord(def), `node template ${name} is ${describe(def)}; it must be a mapping`, where);
      const node = def as Obj;
      const type = asString(own(node, 'type'), `${where}.type`, `the type of node template ${name}`);
      need(
        this.types.get('node_types', type) !== undefined || type.startsWith('tosca.'),
        `node template ${name} has type ${type}, which no imported file defines`,
        `${where}.type`,
      );
      this.types.lineage('node_types', type);
      const properties = optObj(own(node, 'properties'), `${where}.properties`, `the properties of ${name}`) ?? {};
      nodes.set(name, { name, def: node, type, properties, path });
    }

    const groups = new Map<string, { members: string[]; type: string; where: string }>();
    for (const { name, def, where } of this.namedEntries(file, template, 'groups')) {
      const type = asString(own(def, 'type'), `${where}.type`, `the type of group ${name}`);
      const members = optStrings(own(def, 'members'), `${where}.members`, `the members of group ${name}`) ?? [];
      members.forEach((member, index) => {
        need(nodes.has(member), `group ${name} has the member ${member}, which is not a node template of this topology`, `${where}.members[${index}]`);
      });
      groups.set(name, { members, type, where });
    }

    const topology: Topology = { file, template, nodes, groups };
    // Every requirement must name a node template of the topology (or, abstractly, a node type).
    for (const node of nodes.values()) {
      for (const requirement of this.requirements(topology, node)) {
        need(
          nodes.has(requirement.target) || this.types.get('node_types', requirement.target) !== undefined,
          `requirement ${requirement.name} of ${node.name} names ${requirement.target}, which is not a node template of this topology`,
          requirement.where,
        );
      }
    }
    return topology;
  }

  /** `groups` and `policies` come as a mapping or, as Tacker's samples write policies, a list of one-entry mappings. */
  namedEntries(file: ToscaFile, template: Obj, section: 'groups' | 'policies'): Array<{ name: string; def: Obj; where: string }> {
    const value = own(template, section);
    const base = ['topology_template', section] as const;
    if (value === undefined || value === null) return [];
    const found: Array<{ name: string; def: Obj; where: string }> = [];
    const add = (name: string, def: unknown, where: string): void => {
      need(isRecord(def), `${section === 'groups' ? 'group' : 'policy'} ${name} is ${describe(def)}; it must be a mapping`, where);
      found.push({ name, def: def as Obj, where });
    };
    if (isRecord(value)) {
      for (const [name, def] of Object.entries(value)) add(name, def, this.at(file, ...base, name));
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => {
        const where = this.at(file, ...base, index);
        need(
          isRecord(item) && Object.keys(item).length === 1,
          `is ${describe(item)}; each entry of ${section} is a one-entry mapping {name: definition}`,
          where,
        );
        const [name, def] = Object.entries(item as Obj)[0] as [string, unknown];
        add(name, def, `${where}.${name}`);
      });
    } else {
      throw new PackageError(`is ${describe(value)}; ${section} is a mapping or a list`, this.at(file, ...base));
    }
    return found;
  }

  requirements(topology: Topology, node: NodeTemplate): Requirement[] {
    const where = `${topology.file.where}: ${node.path}.requirements`;
    const list = optList(own(node.def, 'requirements'), where, `the requirements of ${node.name}`) ?? [];
    return list.map((item, index) => {
      const itemWhere = `${where}[${index}]`;
      need(isRecord(item) && Object.keys(item).length === 1, `is ${describe(item)}; a requirement is a one-entry mapping {name: node}`, itemWhere);
      const [name, value] = Object.entries(item as Obj)[0] as [string, unknown];
      const target = isRecord(value) ? own(value, 'node') : value;
      return { name, target: asString(target, `${itemWhere}.${name}`, `requirement ${name} of ${node.name}`), where: `${itemWhere}.${name}` };
    });
  }

  /** Resolves an artifact file against the declaring file, then (as Tacker v1 does) against the package root. */
  artifactFile(spec: unknown, file: ToscaFile, where: string, what: string): string {
    const name = asString(spec, where, what);
    const refuse = (why: string): never => {
      throw new PackageError(`${what} names ${name}, ${why}`, where);
    };
    if (isUrl(name)) refuse('a URL; artifacts must be files in the package');
    if (isAbsolute(name)) refuse('an absolute path; artifacts are paths relative to the file declaring them');
    const relative = posix.normalize(posix.join(posix.dirname(file.path ?? ''), name));
    if (escapesRoot(relative)) refuse('which is outside the package');
    let path = relative;
    if (!this.reader.has(relative)) {
      const fromRoot = posix.normalize(name);
      if (escapesRoot(fromRoot) || !this.reader.has(fromRoot)) refuse(`which is not in the package (looked for ${relative})`);
      path = fromRoot;
    }
    if (!this.artifactFiles.includes(path)) this.artifactFiles.push(path);
    return path;
  }

  /** The artifacts a node template declares (each as `name: file` or `name: {type, file, ...}`), files checked. */
  artifacts(file: ToscaFile, def: Obj, path: string): Map<string, DeclaredArtifact> {
    const where = `${file.where}: ${path}.artifacts`;
    const found = new Map<string, DeclaredArtifact>();
    for (const [name, value] of Object.entries(optObj(own(def, 'artifacts'), where, 'artifacts') ?? {})) {
      const artifactWhere = `${where}.${name}`;
      if (typeof value === 'string') {
        found.set(name, { name, file: this.artifactFile(value, file, artifactWhere, `artifact ${name}`), def: {}, short: true });
        continue;
      }
      need(isRecord(value), `artifact ${name} is ${describe(value)}; it must be a file name or a mapping with a file`, artifactWhere);
      const artifact = value as Obj;
      const type = optString(own(artifact, 'type'), `${artifactWhere}.type`, `the type of artifact ${name}`);
      found.set(name, {
        name,
        file: this.artifactFile(own(artifact, 'file'), file, `${artifactWhere}.file`, `artifact ${name}`),
        ...(type ? { type } : {}),
        def: artifact,
        short: false,
      });
    }
    return found;
  }

  // -- VNF node properties

  /**
   * A VNF property as Tacker resolves it: the node template's value (a get_input falls back to the
   * input's default), else the nearest type's property default, else a single-valued constraint.
   */
  vnfProperty(topology: Topology, node: NodeTemplate, name: string): unknown {
    let value = own(node.properties, name);
    if (isRecord(value) && Object.keys(value).length === 1 && typeof own(value, 'get_input') === 'string') {
      const input = own(
        optObj(own(topology.template, 'inputs'), this.at(topology.file, 'topology_template', 'inputs'), 'inputs'),
        own(value, 'get_input') as string,
      );
      value = isRecord(input) ? own(input, 'default') : undefined;
    }
    if (value !== undefined && !(isRecord(value) && Object.keys(value).some((key) => key.startsWith('get_') || key === 'concat'))) return value;
    for (const typeName of this.types.lineage('node_types', node.type)) {
      const definition = own(optObj(own(this.types.get('node_types', typeName)?.def, 'properties'), typeName, 'properties'), name);
      if (!isRecord(definition)) continue;
      if (own(definition, 'default') !== undefined) return own(definition, 'default');
      const constraints = own(definition, 'constraints');
      for (const constraint of Array.isArray(constraints) ? constraints : []) {
        if (!isRecord(constraint)) continue;
        if (own(constraint, 'equal') !== undefined) return own(constraint, 'equal');
        const valid = own(constraint, 'valid_values');
        if (Array.isArray(valid) && valid.length === 1) return valid[0];
      }
    }
    return undefined;
  }

  // -- Nodes of a flavour

  swImage(topology: Topology, node: NodeTemplate): SwImage | undefined {
    const where = `${topology.file.where}: ${node.path}`;
    const artifacts = this.artifacts(topology.file, node.def, node.path);
    // Tacker: an artifact of type SwImage, or any artifact in the short `name: file` notation.
    const images = [...artifacts.values()].filter(
      (artifact) => artifact.short || (artifact.type !== undefined && this.types.isA('artifact_types', artifact.type, T.swImage)),
    );
    need(images.length <= 1, `${node.name} has ${images.length} software image artifacts; a node has at most one`, `${where}.artifacts`);
    const data = own(node.properties, 'sw_image_data');
    if (data === undefined || data === null) {
      need(
        images.length === 0,
        `${node.name} has the software image artifact ${images[0]?.name} but no properties.sw_image_data describing it`,
        `${where}.properties`,
      );
      return undefined;
    }
    const dataWhere = `${where}.properties.sw_image_data`;
    const image = optObj(data, dataWhere, 'sw_image_data') as Obj;
    const checksum = optObj(own(image, 'checksum'), `${dataWhere}.checksum`, 'sw_image_data.checksum');
    need(checksum !== undefined, 'sw_image_data has no checksum', dataWhere);
    const minDisk = optSize(own(image, 'min_disk'), `${dataWhere}.min_disk`, 'min_disk');
    const minRam = optSize(own(image, 'min_ram'), `${dataWhere}.min_ram`, 'min_ram');
    const size = optSize(own(image, 'size'), `${dataWhere}.size`, 'size');
    const file = images[0]?.file;
    return {
      name: asString(own(image, 'name'), `${dataWhere}.name`, 'name'),
      version: asString(own(image, 'version'), `${dataWhere}.version`, 'version'),
      checksum: {
        algorithm: asString(own(checksum, 'algorithm'), `${dataWhere}.checksum.algorithm`, 'algorithm'),
        hash: asString(own(checksum, 'hash'), `${dataWhere}.checksum.hash`, 'hash'),
      },
      containerFormat: asString(own(image, 'container_format'), `${dataWhere}.container_format`, 'container_format'),
      diskFormat: asString(own(image, 'disk_format'), `${dataWhere}.disk_format`, 'disk_format'),
      ...(minDisk !== undefined ? { minDisk } : {}),
      ...(minRam !== undefined ? { minRam } : {}),
      ...(size !== undefined ? { size } : {}),
      ...(file !== undefined ? { file } : {}),
    };
  }

  vdu(topology: Topology, node: NodeTemplate): VduInfo {
    const where = `${topology.file.where}: ${node.path}`;
    const p = node.properties;
    const profile = optObj(own(p, 'vdu_profile'), `${where}.properties.vdu_profile`, 'vdu_profile');
    let vduProfile: VduInfo['vduProfile'];
    if (profile) {
      const profileWhere = `${where}.properties.vdu_profile`;
      vduProfile = {
        minNumberOfInstances: asCount(own(profile, 'min_number_of_instances'), `${profileWhere}.min_number_of_instances`, 'min_number_of_instances'),
        maxNumberOfInstances: asCount(own(profile, 'max_number_of_instances'), `${profileWhere}.max_number_of_instances`, 'max_number_of_instances'),
      };
      need(
        vduProfile.minNumberOfInstances <= vduProfile.maxNumberOfInstances,
        `min_number_of_instances (${vduProfile.minNumberOfInstances}) is more than max_number_of_instances (${vduProfile.maxNumberOfInstances})`,
        profileWhere,
      );
    }

    const computeWhere = `${where}.capabilities.virtual_compute.properties`;
    const capabilities = optObj(own(node.def, 'capabilities'), `${where}.capabilities`, 'capabilities');
    const compute = optObj(
      own(optObj(own(capabilities, 'virtual_compute'), `${where}.capabilities.virtual_compute`, 'virtual_compute'), 'properties'),
      computeWhere,
      'properties',
    );
    let virtualCompute: VduInfo['virtualCompute'];
    if (compute) {
      const memory = optObj(own(compute, 'virtual_memory'), `${computeWhere}.virtual_memory`, 'virtual_memory');
      const cpu = optObj(own(compute, 'virtual_cpu'), `${computeWhere}.virtual_cpu`, 'virtual_cpu');
      const memSize = optSize(own(memory, 'virtual_mem_size'), `${computeWhere}.virtual_memory.virtual_mem_size`, 'virtual_mem_size');
      const cpus = optCount(own(cpu, 'num_virtual_cpu'), `${computeWhere}.virtual_cpu.num_virtual_cpu`, 'num_virtual_cpu');
      const localStorage = optList(own(compute, 'virtual_local_storage'), `${computeWhere}.virtual_local_storage`, 'virtual_local_storage');
      // Tacker's samples write {properties: {requested_additional_capability_name}}; SOL001 a map of capabilities.
      const requested = own(compute, 'requested_additional_capabilities');
      const candidates = isRecord(requested) ? [own(requested, 'properties'), ...Object.values(requested)] : [];
      const capabilityName = candidates
        .map((entry) => (isRecord(entry) ? own(entry, 'requested_additional_capability_name') : undefined))
        .find((name) => typeof name === 'string');
      virtualCompute = {
        ...(memSize !== undefined ? { virtualMemSize: memSize } : {}),
        ...(cpus !== undefined ? { numVirtualCpu: cpus } : {}),
        ...(localStorage !== undefined ? { virtualLocalStorage: localStorage } : {}),
        ...(typeof capabilityName === 'string' ? { requestedAdditionalCapabilityName: capabilityName } : {}),
      };
    }

    const storages: string[] = [];
    for (const requirement of this.requirements(topology, node)) {
      if (requirement.name !== 'virtual_storage') continue;
      const target = topology.nodes.get(requirement.target);
      need(
        target !== undefined && [T.blockStorage, T.objectStorage, T.fileStorage].some((base) => this.nodeIsA(target, base)),
        `virtual_storage of ${node.name} names ${requirement.target}, which is not a Vdu storage node`,
        requirement.where,
      );
      storages.push(requirement.target);
    }

    const description = optString(own(p, 'description'), `${where}.properties.description`, 'description');
    const monitoring = optList(own(p, 'monitoring_parameters'), `${where}.properties.monitoring_parameters`, 'monitoring_parameters');
    const swImage = this.swImage(topology, node);
    return {
      id: node.name,
      name: asString(own(p, 'name'), `${where}.properties.name`, `the name of VDU ${node.name}`),
      ...(description !== undefined ? { description } : {}),
      ...(vduProfile ? { vduProfile } : {}),
      ...(swImage ? { swImage } : {}),
      ...(virtualCompute ? { virtualCompute } : {}),
      storages,
      ...(monitoring ? { monitoringParameters: monitoring } : {}),
      ...(own(p, 'boot_order') !== undefined ? { bootOrder: own(p, 'boot_order') } : {}),
    };
  }

  storage(topology: Topology, node: NodeTemplate): StorageInfo {
    const where = `${topology.file.where}: ${node.path}.properties.virtual_block_storage_data`;
    const data = optObj(own(node.properties, 'virtual_block_storage_data'), where, 'virtual_block_storage_data');
    let virtualBlockStorageData: StorageInfo['virtualBlockStorageData'];
    if (data) {
      const size = optSize(own(data, 'size_of_storage'), `${where}.size_of_storage`, 'size_of_storage');
      const rdma = own(data, 'rdma_enabled');
      need(rdma === undefined || typeof rdma === 'boolean', `rdma_enabled is ${describe(rdma)}; it must be true or false`, `${where}.rdma_enabled`);
      virtualBlockStorageData = { ...(size !== undefined ? { sizeOfStorage: size } : {}), ...(typeof rdma === 'boolean' ? { rdmaEnabled: rdma } : {}) };
    }
    const swImage = this.swImage(topology, node);
    return { id: node.name, ...(virtualBlockStorageData ? { virtualBlockStorageData } : {}), ...(swImage ? { swImage } : {}) };
  }

  cp(topology: Topology, node: NodeTemplate): CpInfo {
    const where = `${topology.file.where}: ${node.path}.properties`;
    const layerProtocols = optStrings(own(node.properties, 'layer_protocols'), `${where}.layer_protocols`, 'layer_protocols');
    const order = optCount(own(node.properties, 'order'), `${where}.order`, 'order');
    const vnicType = optString(own(node.properties, 'vnic_type'), `${where}.vnic_type`, 'vnic_type');
    let vdu: string | undefined;
    let virtualLink: string | undefined;
    for (const requirement of this.requirements(topology, node)) {
      const target = topology.nodes.get(requirement.target);
      if (requirement.name === 'virtual_binding') {
        need(
          target !== undefined && this.nodeIsA(target, T.vdu),
          `virtual_binding of ${node.name} names ${requirement.target}, which is not a Vdu.Compute node`,
          requirement.where,
        );
        vdu = requirement.target;
      } else if (requirement.name === 'virtual_link') {
        need(
          target !== undefined && this.nodeIsA(target, T.vl),
          `virtual_link of ${node.name} names ${requirement.target}, which is not a VnfVirtualLink node`,
          requirement.where,
        );
        virtualLink = requirement.target;
      }
    }
    return {
      id: node.name,
      ...(layerProtocols ? { layerProtocols } : {}),
      ...(order !== undefined ? { order } : {}),
      ...(vnicType !== undefined ? { vnicType } : {}),
      ...(vdu !== undefined ? { vdu } : {}),
      ...(virtualLink !== undefined ? { virtualLink } : {}),
    };
  }

  extCp(topology: Topology, node: NodeTemplate): ExtCpInfo {
    const where = `${topology.file.where}: ${node.path}.properties`;
    const layerProtocols = optStrings(own(node.properties, 'layer_protocols'), `${where}.layer_protocols`, 'layer_protocols');
    const internal = this.requirements(topology, node).find((requirement) => requirement.name === 'internal_virtual_link');
    if (internal) {
      const target = topology.nodes.get(internal.target);
      need(
        target !== undefined && this.nodeIsA(target, T.vl),
        `internal_virtual_link of ${node.name} names ${internal.target}, which is not a VnfVirtualLink node`,
        internal.where,
      );
    }
    return { id: node.name, ...(layerProtocols ? { layerProtocols } : {}), ...(internal ? { internalVirtualLink: internal.target } : {}) };
  }

  virtualLink(topology: Topology, node: NodeTemplate): VirtualLinkInfo {
    const description = optString(own(node.properties, 'description'), `${topology.file.where}: ${node.path}.properties.description`, 'description');
    return {
      id: node.name,
      ...(own(node.properties, 'connectivity_type') !== undefined ? { connectivityType: own(node.properties, 'connectivity_type') } : {}),
      ...(own(node.properties, 'vl_profile') !== undefined ? { vlProfile: own(node.properties, 'vl_profile') } : {}),
      ...(description !== undefined ? { description } : {}),
    };
  }

  lcmOperations(topology: Topology, vnf: NodeTemplate | undefined): Record<string, LcmOperationInfo> {
    const operations: Record<string, LcmOperationInfo> = {};
    if (!vnf) return operations;
    const base = `${topology.file.where}: ${vnf.path}`;
    const artifacts = this.artifacts(topology.file, vnf.def, vnf.path);
    const interfaces = optObj(own(vnf.def, 'interfaces'), `${base}.interfaces`, 'interfaces');
    const vnflcm = optObj(own(interfaces, 'Vnflcm'), `${base}.interfaces.Vnflcm`, 'Vnflcm');
    const artifactFor = (name: string, where: string, operation: string): ArtifactRef => {
      const artifact = artifacts.get(name);
      if (artifact) return { name, file: artifact.file, ...(artifact.type ? { type: artifact.type } : {}) };
      // TOSCA lets an implementation be a file path instead of an artifact name.
      need(/[./]/.test(name), `Vnflcm.${operation} names the artifact ${name}, which ${vnf.name} does not declare`, where);
      return { name, file: this.artifactFile(name, topology.file, where, `Vnflcm.${operation}`) };
    };
    for (const [operation, value] of Object.entries(vnflcm ?? {})) {
      const where = `${base}.interfaces.Vnflcm.${operation}`;
      if (value === null || (Array.isArray(value) && value.length === 0)) {
        put(operations, operation, {});
        continue;
      }
      const definition = typeof value === 'string' ? { implementation: value } : value;
      need(isRecord(definition), `Vnflcm.${operation} is ${describe(value)}; an operation is [], an implementation name or {implementation: ...}`, where);
      let implementation = own(definition as Obj, 'implementation');
      let dependencies: unknown;
      if (isRecord(implementation)) {
        dependencies = own(implementation, 'dependencies');
        implementation = own(implementation, 'primary');
      }
      if (implementation === undefined || implementation === null) {
        put(operations, operation, {});
        continue;
      }
      const primary = asString(implementation, `${where}.implementation`, `the implementation of Vnflcm.${operation}`);
      const dependencyNames = optStrings(dependencies, `${where}.implementation.dependencies`, 'dependencies');
      put(operations, operation, {
        implementation: primary,
        artifact: artifactFor(primary, `${where}.implementation`, operation),
        ...(dependencyNames
          ? { dependencies: dependencyNames.map((name, index) => artifactFor(name, `${where}.implementation.dependencies[${index}]`, operation)) }
          : {}),
      });
    }
    return operations;
  }

  flavour(topology: Topology, flavourId: string, vnf: NodeTemplate | undefined): FlavourInfo {
    const { file, nodes } = topology;
    const all = [...nodes.values()];
    const vdus = all.filter((node) => this.nodeIsA(node, T.vdu)).map((node) => this.vdu(topology, node));
    const vduIds = new Set(vdus.map((vdu) => vdu.id));
    const description = vnf ? this.vnfProperty(topology, vnf, 'flavour_description') : undefined;
    const flavour: FlavourInfo = {
      flavourId,
      ...(typeof description === 'string' ? { description } : {}),
      vdus,
      storages: all.filter((node) => this.nodeIsA(node, T.blockStorage)).map((node) => this.storage(topology, node)),
      cps: all.filter((node) => this.nodeIsA(node, T.vduCp)).map((node) => this.cp(topology, node)),
      extCps: all.filter((node) => this.nodeIsA(node, T.extCp)).map((node) => this.extCp(topology, node)),
      virtualLinks: all.filter((node) => this.nodeIsA(node, T.vl)).map((node) => this.virtualLink(topology, node)),
      scalingAspects: [],
      vduScalingAspectDeltas: [],
      instantiationLevels: { levels: {} },
      vduInstantiationLevels: {},
      vduInitialDeltas: {},
      affinityRules: [],
      lcmOperations: this.lcmOperations(topology, vnf),
      externalCps: this.externalCps(topology),
    };

    const policies = this.namedEntries(file, topology.template, 'policies').map((policy) => ({
      ...policy,
      type: asString(own(policy.def, 'type'), `${policy.where}.type`, `the type of policy ${policy.name}`),
      properties: optObj(own(policy.def, 'properties'), `${policy.where}.properties`, 'properties') ?? {},
      targets: (optStrings(own(policy.def, 'targets'), `${policy.where}.targets`, 'targets') ?? []).map((target, index) => {
        need(
          nodes.has(target) || topology.groups.has(target),
          `policy ${policy.name} targets ${target}, which is neither a node template nor a group of this topology`,
          `${policy.where}.targets[${index}]`,
        );
        return target;
      }),
    }));
    const isA = (type: string, base: string): boolean => this.types.isA('policy_types', type, base);
    const vduTargets = (policy: (typeof policies)[number]): string[] => {
      policy.targets.forEach((target, index) => {
        need(vduIds.has(target), `policy ${policy.name} targets ${target}, which is not a Vdu.Compute node`, `${policy.where}.targets[${index}]`);
      });
      return policy.targets;
    };

    // Aspects and levels first: the other policies refer to them.
    for (const policy of policies.filter((candidate) => isA(candidate.type, T.scalingAspects))) {
      const where = `${policy.where}.properties.aspects`;
      for (const [id, value] of Object.entries(optObj(own(policy.properties, 'aspects'), where, 'aspects') ?? {})) {
        const aspect = optObj(value, `${where}.${id}`, `aspect ${id}`) ?? {};
        const name = optString(own(aspect, 'name'), `${where}.${id}.name`, 'name');
        const description = optString(own(aspect, 'description'), `${where}.${id}.description`, 'description');
        const stepDeltas = optStrings(own(aspect, 'step_deltas'), `${where}.${id}.step_deltas`, 'step_deltas');
        need(!flavour.scalingAspects.some((known) => known.id === id), `declares the scaling aspect ${id} twice`, `${where}.${id}`);
        flavour.scalingAspects.push({
          id,
          ...(name !== undefined ? { name } : {}),
          ...(description !== undefined ? { description } : {}),
          maxScaleLevel: asCount(own(aspect, 'max_scale_level'), `${where}.${id}.max_scale_level`, 'max_scale_level'),
          ...(stepDeltas ? { stepDeltas } : {}),
        });
      }
    }
    const levelPolicies = policies.filter((candidate) => isA(candidate.type, T.levels));
    need(levelPolicies.length <= 1, `declares ${levelPolicies.length} InstantiationLevels policies; a flavour has one`, levelPolicies[1]?.where ?? '');
    for (const policy of levelPolicies) {
      const where = `${policy.where}.properties`;
      for (const [id, value] of Object.entries(optObj(own(policy.properties, 'levels'), `${where}.levels`, 'levels') ?? {})) {
        const levelWhere = `${where}.levels.${id}`;
        const level = optObj(value, levelWhere, `level ${id}`) ?? {};
        const description = optString(own(level, 'description'), `${levelWhere}.description`, 'description');
        const scaleInfo = optObj(own(level, 'scale_info'), `${levelWhere}.scale_info`, 'scale_info');
        put(flavour.instantiationLevels.levels, id, {
          ...(description !== undefined ? { description } : {}),
          ...(scaleInfo
            ? {
                scaleInfo: Object.fromEntries(
                  Object.entries(scaleInfo).map(([aspectId, info]) => {
                    const infoWhere = `${levelWhere}.scale_info.${aspectId}`;
                    return [
                      aspectId,
                      { scaleLevel: asCount(own(optObj(info, infoWhere, 'scale_info') ?? {}, 'scale_level'), `${infoWhere}.scale_level`, 'scale_level') },
                    ];
                  }),
                ),
              }
            : {}),
        });
      }
      const defaultLevel = optString(own(policy.properties, 'default_level'), `${where}.default_level`, 'default_level');
      if (defaultLevel !== undefined) {
        need(
          Object.hasOwn(flavour.instantiationLevels.levels, defaultLevel),
          `default_level ${defaultLevel} is not one of the levels (${Object.keys(flavour.instantiationLevels.levels).join(', ')})`,
          `${where}.default_level`,
        );
        flavour.instantiationLevels.default = defaultLevel;
      }
    }
    const knownLevel = (level: string, where: string): void => {
      need(levelPolicies.length > 0, `uses the instantiation level ${level}, but no tosca.policies.nfv.InstantiationLevels policy is defined`, where);
      need(
        Object.hasOwn(flavour.instantiationLevels.levels, level),
        `uses the instantiation level ${level}, which the InstantiationLevels policy does not define`,
        where,
      );
    };

    for (const policy of policies) {
      const where = `${policy.where}.properties`;
      if (isA(policy.type, T.vduDeltas)) {
        // Not checked against the ScalingAspects: Tacker's own samples name undeclared aspects here.
        const aspectId = asString(own(policy.properties, 'aspect'), `${where}.aspect`, 'aspect');
        const targets = vduTargets(policy);
        const deltas: Record<string, Record<string, number>> = {};
        for (const [deltaId, value] of Object.entries(optObj(own(policy.properties, 'deltas'), `${where}.deltas`, 'deltas') ?? {})) {
          const deltaWhere = `${where}.deltas.${deltaId}`;
          const count = asCount(
            own(optObj(value, deltaWhere, `delta ${deltaId}`) ?? {}, 'number_of_instances'),
            `${deltaWhere}.number_of_instances`,
            'number_of_instances',
          );
          put(deltas, deltaId, Object.fromEntries(targets.map((target) => [target, count])));
        }
        flavour.vduScalingAspectDeltas.push({ aspectId, deltas, targets });
      } else if (isA(policy.type, T.vduLevels) || isA(policy.type, T.vlLevels)) {
        const isVdu = isA(policy.type, T.vduLevels);
        const targets = isVdu ? vduTargets(policy) : policy.targets;
        for (const [level, value] of Object.entries(optObj(own(policy.properties, 'levels'), `${where}.levels`, 'levels') ?? {})) {
          const levelWhere = `${where}.levels.${level}`;
          knownLevel(level, levelWhere);
          if (!isVdu) continue;
          const count = asCount(
            own(optObj(value, levelWhere, `level ${level}`) ?? {}, 'number_of_instances'),
            `${levelWhere}.number_of_instances`,
            'number_of_instances',
          );
          for (const target of targets) {
            const row = (own(flavour.vduInstantiationLevels, target) as Record<string, number> | undefined) ?? put(flavour.vduInstantiationLevels, target, {});
            put(row, level, count);
          }
        }
      } else if (isA(policy.type, T.initialDelta)) {
        const delta = optObj(own(policy.properties, 'initial_delta'), `${where}.initial_delta`, 'initial_delta') ?? {};
        const count = asCount(own(delta, 'number_of_instances'), `${where}.initial_delta.number_of_instances`, 'number_of_instances');
        for (const target of vduTargets(policy)) put(flavour.vduInitialDeltas, target, count);
      } else if (isA(policy.type, T.affinity) || isA(policy.type, T.antiAffinity)) {
        const scope = optString(own(policy.properties, 'scope'), `${where}.scope`, 'scope');
        flavour.affinityRules.push({
          id: policy.name,
          type: isA(policy.type, T.antiAffinity) ? 'anti-affinity' : 'affinity',
          ...(scope !== undefined ? { scope } : {}),
          targets: policy.targets.flatMap((target) => {
            const group = topology.groups.get(target);
            return group && this.types.isA('group_types', group.type, T.placementGroup) ? group.members : [target];
          }),
        });
      }
    }
    return flavour;
  }

  /** substitution_mappings requirements: `name: [node, requirement]` as a mapping or a list of one-entry mappings. */
  externalCps(topology: Topology): string[] {
    const base = this.at(topology.file, 'topology_template', 'substitution_mappings', 'requirements');
    const value = own(own(topology.template, 'substitution_mappings') as Obj, 'requirements');
    const mappings: Array<[string, unknown, string]> = [];
    if (isRecord(value)) {
      for (const [name, mapping] of Object.entries(value)) mappings.push([name, mapping, `${base}.${name}`]);
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => {
        need(
          isRecord(item) && Object.keys(item).length === 1,
          `is ${describe(item)}; a requirement mapping is {name: [node, requirement]}`,
          `${base}[${index}]`,
        );
        const [name, mapping] = Object.entries(item as Obj)[0] as [string, unknown];
        mappings.push([name, mapping, `${base}[${index}].${name}`]);
      });
    } else if (value !== undefined && value !== null) {
      throw new PackageError(`is ${describe(value)}; substitution requirements are a mapping`, base);
    }
    const cps: string[] = [];
    for (const [name, mapping, where] of mappings) {
      if (Array.isArray(mapping) && mapping.length === 0) continue;
      need(
        Array.isArray(mapping) && mapping.length === 2 && mapping.every((part) => typeof part === 'string'),
        `requirement ${name} maps to ${describe(mapping)}; a mapping is [node, requirement]`,
        where,
      );
      const node = (mapping as string[])[0] as string;
      // Tacker does not check these, and its published samples map requirements to nodes they do not
      // have; such a mapping exposes nothing.
      if (topology.nodes.has(node) && !cps.includes(node)) cps.push(node);
    }
    return cps;
  }

  softwareImage(owner: string, image: SwImage, artifact: DeclaredArtifact | undefined, where: string, provider: unknown): SoftwareImageInfo {
    // An image the VNFD only names (no file in the package) is still listed; SOL005 needs a size, 0 when unknown.
    const bytes = (value: string | undefined, what: string): number => {
      if (value === undefined && image.file === undefined) return 0;
      need(value !== undefined, `sw_image_data has no ${what}; a software image in the package needs it`, where);
      return sizeInBytes(value as string) as number;
    };
    const metadata = isRecord(artifact?.def) ? own(artifact.def, 'metadata') : undefined;
    return {
      id: owner,
      name: image.name,
      ...(typeof provider === 'string' && provider ? { provider } : {}),
      version: image.version,
      checksum: image.checksum,
      containerFormat: image.containerFormat,
      diskFormat: image.diskFormat,
      minDisk: bytes(image.minDisk, 'min_disk'),
      ...(image.minRam !== undefined ? { minRam: sizeInBytes(image.minRam) as number } : {}),
      size: bytes(image.size, 'size'),
      ...(image.file !== undefined ? { imagePath: image.file } : {}),
      ...(isRecord(metadata)
        ? { userMetadata: Object.fromEntries(Object.entries(metadata).map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)])) }
        : {}),
    };
  }
}

// ---------------------------------------------------------------------------------------------

const VNF_FIELDS = [
  ['vnfdId', 'descriptor_id'],
  ['vnfProvider', 'provider'],
  ['vnfProductName', 'product_name'],
  ['vnfSoftwareVersion', 'software_version'],
  ['vnfdVersion', 'descriptor_version'],
] as const;

/**
 * Parses the VNFD whose entry file is `entryDefinitions` (a path inside the package). Every problem is
 * a PackageError naming the file and, where it helps, the YAML path.
 */
export async function parseVnfd(reader: VnfdReader, entryDefinitions: string): Promise<ParsedVnfd> {
  const files = await loadFiles(reader, entryDefinitions);
  const packageFiles = files.filter((file) => file.path !== undefined);
  const context = new VnfdExtractor(reader, new TypeRegistry(files));
  const topologies = packageFiles.map((file) => context.topology(file)).filter((topology): topology is Topology => topology !== undefined);

  // Every artifact of every node template, and of the package's own node types, is a package file.
  for (const topology of topologies) {
    for (const node of topology.nodes.values()) context.artifacts(topology.file, node.def, node.path);
  }
  for (const file of packageFiles) {
    for (const [name, def] of Object.entries(optObj(own(file.doc, 'node_types'), file.where, 'node_types') ?? {})) {
      if (isRecord(def)) context.artifacts(file, def, yamlPath('node_types', name));
    }
  }

  const vnfNodes = topologies.flatMap((topology) =>
    [...topology.nodes.values()].filter((node) => context.nodeIsA(node, T.vnf)).map((node) => ({ topology, node })),
  );
  const entry = files[0] as ToscaFile;
  const main = vnfNodes.find((candidate) => candidate.topology.file === entry) ?? vnfNodes[0];
  if (!main) throw new PackageError(`no node template is of a type derived from ${T.vnf}; the VNFD has no VNF node`, entry.where);

  const identity = {} as Record<(typeof VNF_FIELDS)[number][0], string>;
  for (const [field, property] of VNF_FIELDS) {
    const value = [main, ...vnfNodes].map(({ topology, node }) => context.vnfProperty(topology, node, property)).find((candidate) => candidate !== undefined);
    const where = `${main.topology.file.where}: ${main.node.path}.properties.${property}`;
    need(
      value !== undefined,
      `the VNF has no ${property}: neither node template ${main.node.name} nor its type ${main.node.type} (or a type it derives from) gives it a value`,
      where,
    );
    identity[field] = asString(value, where, property);
  }
  const vnfmInfo = context.vnfProperty(main.topology, main.node, 'vnfm_info');

  const flavours: FlavourInfo[] = [];
  const flavourWhere = new Map<string, string>();
  for (const topology of topologies) {
    const mappingsWhere = context.at(topology.file, 'topology_template', 'substitution_mappings');
    const mappings = optObj(own(topology.template, 'substitution_mappings'), mappingsWhere, 'substitution_mappings');
    if (!mappings) continue;
    const nodeType = asString(own(mappings, 'node_type'), `${mappingsWhere}.node_type`, 'node_type');
    if (!context.types.isA('node_types', nodeType, T.vnf)) continue; // substitutes something other than the VNF
    const vnf = [...topology.nodes.values()].find((node) => context.nodeIsA(node, T.vnf));
    const properties = optObj(own(mappings, 'properties'), `${mappingsWhere}.properties`, 'properties');
    const fromNode = vnf ? own(vnf.properties, 'flavour_id') : undefined;
    const flavourId = own(properties, 'flavour_id') ?? (typeof fromNode === 'string' ? fromNode : undefined);
    need(flavourId !== undefined, 'substitution_mappings has no properties.flavour_id; a deployment flavour is named by it', mappingsWhere);
    const id = asString(flavourId, `${mappingsWhere}.properties.flavour_id`, 'flavour_id');
    need(!flavourWhere.has(id), `deployment flavour ${id} is defined twice (also in ${flavourWhere.get(id)})`, `${mappingsWhere}.properties.flavour_id`);
    flavourWhere.set(id, topology.file.where);
    flavours.push(context.flavour(topology, id, vnf));
  }
  if (!flavours.length) {
    throw new PackageError(
      `no deployment flavour: no topology_template has substitution_mappings for a type derived from ${T.vnf} with properties.flavour_id`,
      entry.where,
    );
  }

  // SOL005 software images: one per owning node, whether the package carries the file or the VNFD
  // only names the image (Tacker lists both; its samples name devstack's cirros image that way).
  const softwareImages: SoftwareImageInfo[] = [];
  for (const topology of topologies) {
    for (const node of topology.nodes.values()) {
      if (softwareImages.some((image) => image.id === node.name)) continue;
      if (!context.nodeIsA(node, T.vdu) && !context.nodeIsA(node, T.blockStorage)) continue;
      const image = context.swImage(topology, node);
      if (!image) continue;
      const artifact =
        image.file === undefined
          ? undefined
          : [...context.artifacts(topology.file, node.def, node.path).values()].find((candidate) => candidate.file === image.file);
      const provider = own(own(node.properties, 'sw_image_data') as Obj, 'provider');
      softwareImages.push(context.softwareImage(node.name, image, artifact, `${topology.file.where}: ${node.path}.properties.sw_image_data`, provider));
    }
  }

  return {
    ...identity,
    ...(Array.isArray(vnfmInfo) && vnfmInfo.every((item) => typeof item === 'string') ? { vnfmInfo: vnfmInfo as string[] } : {}),
    descriptorFiles: packageFiles.map((file) => file.path as string),
    flavours,
    softwareImages,
    artifactFiles: context.artifactFiles,
  };
}
