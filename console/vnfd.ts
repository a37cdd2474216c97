// What the instantiate and scale forms offer, read from a package's VNFD (GET .../vnfd): its
// deployment flavours, each with its VDUs, instantiation levels and scaling aspects. A VNFD of
// several files comes as a ZIP, read here with the browser's own deflate (DecompressionStream).
import { parse } from 'yaml';
import { list, send } from './api.ts';
import type { VnfPackage } from './types.ts';

export interface FlavourSummary {
  id: string;
  description?: string;
  vdus: string[];
  levels: string[];
  defaultLevel?: string;
  aspects: Array<{ id: string; maxScaleLevel?: number }>;
}

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);
const child = (node: unknown, key: string): Node => (isNode(node) && isNode(node[key]) ? (node[key] as Node) : {});

async function inflate(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The files of a ZIP archive (stored or deflated entries) by path, from its central directory. */
export async function unzip(buffer: ArrayBuffer): Promise<Map<string, string>> {
  const view = new DataView(buffer);
  let end = buffer.byteLength - 22;
  while (end >= 0 && view.getUint32(end, true) !== 0x06054b50) end -= 1;
  if (end < 0) throw new Error('The VNFD archive is not a ZIP file');
  const count = view.getUint16(end + 10, true);
  let offset = view.getUint32(end + 16, true);
  const files = new Map<string, string>();
  const decoder = new TextDecoder();
  for (let i = 0; i < count; i += 1) {
    const method = view.getUint16(offset + 10, true);
    const size = view.getUint32(offset + 20, true);
    const nameLength = view.getUint16(offset + 28, true);
    const extraLength = view.getUint16(offset + 30, true);
    const commentLength = view.getUint16(offset + 32, true);
    const local = view.getUint32(offset + 42, true);
    const name = decoder.decode(new Uint8Array(buffer, offset + 46, nameLength));
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    const data = new Uint8Array(buffer, start, size);
    if (!name.endsWith('/')) files.set(name, decoder.decode(method === 8 ? await inflate(data) : data));
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return files;
}

/** The flavours a VNFD's files describe: each file with substitution_mappings naming a flavour_id. */
export function summarize(texts: Iterable<string>): FlavourSummary[] {
  const flavours: FlavourSummary[] = [];
  for (const text of texts) {
    let document: unknown;
    try {
      document = parse(text);
    } catch {
      continue;
    }
    const topology = child(document, 'topology_template');
    const id = child(child(topology, 'substitution_mappings'), 'properties').flavour_id;
    if (typeof id !== 'string') continue;
    const templates = child(topology, 'node_templates');
    const flavour: FlavourSummary = { id, vdus: [], levels: [], aspects: [] };
    for (const [name, node] of Object.entries(templates)) {
      const type = String(child({ node }, 'node').type ?? '');
      if (/Vdu\.Compute$|OsContainerDeployableUnit$/.test(type)) flavour.vdus.push(name);
      const description = child(node, 'properties').flavour_description;
      if (typeof description === 'string' && !/^\{/.test(description)) flavour.description = description;
    }
    const policies = Array.isArray(topology.policies) ? topology.policies : [];
    for (const entry of policies) {
      for (const policy of Object.values(isNode(entry) ? entry : {})) {
        const properties = child(policy, 'properties');
        const type = isNode(policy) ? String(policy.type ?? '') : '';
        if (type.endsWith('nfv.InstantiationLevels')) {
          flavour.levels = Object.keys(child(properties, 'levels'));
          if (typeof properties.default_level === 'string') flavour.defaultLevel = properties.default_level;
        }
        if (type.endsWith('nfv.ScalingAspects')) {
          for (const [aspect, info] of Object.entries(child(properties, 'aspects'))) {
            const max = child({ info }, 'info').max_scale_level;
            flavour.aspects.push(typeof max === 'number' ? { id: aspect, maxScaleLevel: max } : { id: aspect });
          }
        }
      }
    }
    flavours.push(flavour);
  }
  return flavours;
}

/** The flavours of an ONBOARDED package's VNFD. */
export async function packageFlavours(packageId: string): Promise<FlavourSummary[]> {
  const response = await send('GET', `/vnfpkgm/v2/vnf_packages/${encodeURIComponent(packageId)}/vnfd`, { accept: 'application/zip, text/plain' });
  const type = response.headers.get('Content-Type') ?? '';
  if (type.startsWith('text/plain')) return summarize([await response.text()]);
  const files = await unzip(await response.arrayBuffer());
  return summarize([...files].filter(([path]) => /\.ya?ml$/i.test(path)).map(([, text]) => text));
}

/** The flavours of the VNFD `vnfdId`, from its onboarded package (v2 VNF instances name the VNFD, not the package). */
export async function vnfdFlavours(vnfdId: string): Promise<FlavourSummary[]> {
  const packages = await list<VnfPackage>(`/vnfpkgm/v2/vnf_packages?filter=${encodeURIComponent(`(eq,vnfdId,${vnfdId})`)}`);
  const onboarded = packages.find((pkg) => pkg.onboardingState === 'ONBOARDED');
  return onboarded ? packageFlavours(onboarded.id) : [];
}
