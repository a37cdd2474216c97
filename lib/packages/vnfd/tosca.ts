// The TOSCA side of a VNFD: its files loaded with their imports (package files, or the SOL001 type
// files the VNFM ships), and the type registry that resolves derived_from across those files.
import { posix } from 'node:path';
import { isRecord } from '#lib/json.ts';
import { InvalidYamlError, UnsafeYamlError, VNFD_LIMITS, parseSafeYaml } from '#lib/yaml.ts';
import { PackageError } from '../errors.ts';
import { SHIPPED_SOL001 } from '../sol001/types.ts';
import type { VnfdReader } from './model.ts';

export const SOL001_TYPE_FILES = ['etsi_nfv_sol001_common_types.yaml', 'etsi_nfv_sol001_vnfd_types.yaml'] as const;

// ---------------------------------------------------------------------------------------------
// Reading parsed YAML, which is untrusted

export type Obj = Record<string, unknown>;

/** Own keys only: a VNFD naming a node "constructor" must not find Object.prototype. */
export const own = (object: Obj | undefined, key: string): unknown => (object && Object.hasOwn(object, key) ? object[key] : undefined);
/** Sets an own property, also for a VNFD name such as "__proto__", which plain assignment would not. */
export function put<V>(record: Record<string, V>, key: string, value: V): V {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  return value;
}
export const describe = (value: unknown): string =>
  value === undefined
    ? 'missing'
    : Array.isArray(value)
      ? 'a list'
      : isRecord(value)
        ? 'a mapping'
        : value === null
          ? 'null'
          : `${typeof value} ${JSON.stringify(value)}`;

/** "topology_template.node_templates.VDU1.requirements[0]" from its segments. */
export function yamlPath(...segments: Array<string | number>): string {
  return segments.map((segment, index) => (typeof segment === 'number' ? `[${segment}]` : index === 0 ? segment : `.${segment}`)).join('');
}

// ---------------------------------------------------------------------------------------------
// Files and imports

export interface ToscaFile {
  /** Package path, or undefined for a shipped SOL001 file. */
  path?: string;
  /** Shipped SOL001 file name. */
  shipped?: string;
  /** How problems name the file. */
  where: string;
  doc: Obj;
}

type FileRef = { path: string } | { shipped: string };

/** Refused YAML as what it is here: a problem of the package, where the YAML said. */
const asPackageError = (error: unknown): unknown => (error instanceof UnsafeYamlError ? new PackageError(error.message, error.where, { cause: error }) : error);

const shippedDocs = new Map<string, Promise<Obj>>();

/** The shipped SOL001 files are parsed once per process; nothing below mutates parsed data. */
function shippedDoc(name: string): Promise<Obj> {
  let doc = shippedDocs.get(name);
  if (!doc) {
    // Embedded as strings so the types travel inside every bundle.
    const text = SHIPPED_SOL001[name];
    doc =
      text === undefined
        ? Promise.reject(new Error(`${name} is not shipped`))
        : Promise.resolve()
            .then(() => parseSafeYaml(text, shippedWhere(name)) as Obj)
            .catch((error: unknown) => Promise.reject(asPackageError(error)));
    doc.catch(() => shippedDocs.delete(name));
    shippedDocs.set(name, doc);
  }
  return doc;
}

const shippedWhere = (name: string): string => `${name} (SOL001 v2.6.1 shipped with the VNFM)`;
export const isUrl = (spec: string): boolean => /^[a-z][a-z0-9+.-]+:/i.test(spec);
export const isAbsolute = (spec: string): boolean => spec.startsWith('/') || spec.startsWith('\\') || /^[a-z]:[\\/]/i.test(spec);
export const escapesRoot = (path: string): boolean => path === '..' || path.startsWith('../');
const sol001Name = (spec: string): string | undefined => {
  const base = posix.basename(spec.split(/[?#]/)[0] ?? '');
  return (SOL001_TYPE_FILES as readonly string[]).includes(base) ? base : undefined;
};

function importSpec(entry: unknown, where: string): { spec: string; repository?: string } {
  if (typeof entry === 'string' && entry) return { spec: entry };
  if (isRecord(entry)) {
    // TOSCA 1.2 `- file: x` and the list-of-maps form `- name: x` / `- name: { file: x }`.
    const definition = typeof own(entry, 'file') === 'string' ? entry : Object.keys(entry).length === 1 ? Object.values(entry)[0] : undefined;
    if (typeof definition === 'string' && definition) return { spec: definition };
    if (isRecord(definition) && typeof own(definition, 'file') === 'string' && own(definition, 'file')) {
      const repository = own(definition, 'repository');
      return { spec: own(definition, 'file') as string, ...(typeof repository === 'string' ? { repository } : {}) };
    }
  }
  throw new PackageError(`is ${describe(entry)}; an import is a file name, {file: name} or {<name>: {file: name}}`, where);
}

function resolveImport(spec: string, repository: string | undefined, from: ToscaFile, reader: VnfdReader, where: string): FileRef {
  const sol001 = sol001Name(spec);
  const refuse = (why: string): never => {
    throw new PackageError(`imports ${spec}, ${why}; a VNFD imports files of its package (the ETSI SOL001 type files excepted, which the VNFM ships)`, where);
  };
  if (from.shipped !== undefined) return sol001 ? { shipped: sol001 } : refuse('which the shipped SOL001 types do not contain');
  if (repository !== undefined) return sol001 ? { shipped: sol001 } : refuse(`from repository ${repository}`);
  if (isUrl(spec)) return sol001 ? { shipped: sol001 } : refuse('a URL');
  if (isAbsolute(spec)) return sol001 ? { shipped: sol001 } : refuse('an absolute path');
  const path = posix.normalize(posix.join(posix.dirname(from.path ?? ''), spec));
  if (escapesRoot(path)) return sol001 ? { shipped: sol001 } : refuse('which is outside the package');
  if (reader.has(path)) return { path };
  if (sol001) return { shipped: sol001 };
  return refuse(`which is not in the package (looked for ${path})`);
}

export async function loadFiles(reader: VnfdReader, entry: string): Promise<ToscaFile[]> {
  const entryPath = posix.normalize(entry.replace(/^\/+/, ''));
  if (!reader.has(entryPath)) throw new PackageError('the entry definitions file is not in the package', entry);
  const files: ToscaFile[] = [];
  const seen = new Set<string>();
  const queue: FileRef[] = [{ path: entryPath }];
  let totalBytes = 0;
  while (queue.length) {
    const ref = queue.shift() as FileRef;
    const key = 'path' in ref ? ref.path : `shipped:${ref.shipped}`;
    if (seen.has(key)) continue; // import cycles and diamonds: each file once
    seen.add(key);
    if (seen.size > VNFD_LIMITS.maxFiles) throw new PackageError(`imports more than ${VNFD_LIMITS.maxFiles} files`, entryPath);

    let file: ToscaFile;
    if ('path' in ref) {
      const text = await reader.readText(ref.path);
      totalBytes += Buffer.byteLength(text, 'utf8');
      if (totalBytes > VNFD_LIMITS.maxTotalBytes) throw new PackageError(`the VNFD files together exceed ${VNFD_LIMITS.maxTotalBytes} bytes`, ref.path);
      let doc: unknown;
      try {
        doc = parseSafeYaml(text, ref.path);
      } catch (error) {
        // Every v2.6.1 copy of the SOL001 VNFD types in Tacker's tree has a line PyYAML (Tacker) accepts and
        // strict YAML does not; a bundled copy that does not parse is read as the shipped one.
        const sol001 = sol001Name(ref.path);
        if (!(error instanceof InvalidYamlError) || !sol001) throw asPackageError(error);
        doc = await shippedDoc(sol001);
      }
      if (!isRecord(doc)) throw new PackageError(`is ${describe(doc)}; a TOSCA file is a mapping`, ref.path);
      file = { path: ref.path, where: ref.path, doc };
    } else {
      file = { shipped: ref.shipped, where: shippedWhere(ref.shipped), doc: await shippedDoc(ref.shipped) };
    }
    const version = own(file.doc, 'tosca_definitions_version');
    if (typeof version !== 'string' || !version) throw new PackageError('has no tosca_definitions_version; it is not a TOSCA file', file.where);
    files.push(file);

    const imports = own(file.doc, 'imports');
    if (imports === undefined || imports === null) continue;
    if (!Array.isArray(imports)) throw new PackageError(`is ${describe(imports)}; imports is a list`, `${file.where}: imports`);
    imports.forEach((item, index) => {
      const where = `${file.where}: ${yamlPath('imports', index)}`;
      const { spec, repository } = importSpec(item, where);
      queue.push(resolveImport(spec, repository, file, reader, where));
    });
  }
  return files;
}

// ---------------------------------------------------------------------------------------------
// Types

export type TypeKind = 'node_types' | 'artifact_types' | 'group_types' | 'policy_types';

export interface TypeDef {
  def: Obj;
  where: string;
}

export class TypeRegistry {
  readonly #types = new Map<TypeKind, Map<string, TypeDef>>();

  constructor(files: readonly ToscaFile[]) {
    // The package's own definitions win over the shipped ones; among package files, the first loaded.
    const ordered = [...files.filter((file) => file.path !== undefined), ...files.filter((file) => file.path === undefined)];
    for (const kind of ['node_types', 'artifact_types', 'group_types', 'policy_types'] as const) {
      const byName = new Map<string, TypeDef>();
      for (const file of ordered) {
        const section = own(file.doc, kind);
        if (section === undefined || section === null) continue;
        if (!isRecord(section)) throw new PackageError(`is ${describe(section)}; ${kind} is a mapping`, `${file.where}: ${kind}`);
        for (const [name, def] of Object.entries(section)) {
          const where = `${file.where}: ${yamlPath(kind, name)}`;
          if (!isRecord(def)) throw new PackageError(`is ${describe(def)}; a type definition is a mapping`, where);
          const parent = own(def, 'derived_from');
          if (parent !== undefined && typeof parent !== 'string') throw new PackageError(`derived_from is ${describe(parent)}; it names a type`, where);
          if (!byName.has(name)) byName.set(name, { def, where });
        }
      }
      this.#types.set(kind, byName);
    }
  }

  get(kind: TypeKind, name: string): TypeDef | undefined {
    return this.#types.get(kind)?.get(name);
  }

  /** The type and the types it derives from, nearest first; types not defined anywhere end the chain. */
  lineage(kind: TypeKind, name: string): string[] {
    const chain: string[] = [];
    for (let current: string | undefined = name; current !== undefined; ) {
      if (chain.includes(current)) {
        throw new PackageError(`derives from itself (${[...chain, current].join(' -> ')})`, this.get(kind, name)?.where ?? name);
      }
      chain.push(current);
      const parent = own(this.get(kind, current)?.def, 'derived_from');
      current = typeof parent === 'string' ? parent : undefined;
    }
    return chain;
  }

  isA(kind: TypeKind, name: string, base: string): boolean {
    return this.lineage(kind, name).includes(base);
  }
}
