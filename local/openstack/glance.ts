// Glance v2: images that go queued -> saving -> active as their data is uploaded, with size,
// checksum (md5) and os_hash_value (sha512) computed from the uploaded bytes; get/list with
// filters and pagination, JSON-patch updates, delete; the import flow (glance-direct,
// web-download); and devstack's preloaded CirrOS image. Errors are webob-style plain text.
import { createHash } from 'node:crypto';
import { empty, json, Router, type SimReply, type SimRequest } from './http.ts';
import type { Token } from './keystone.ts';
import { ApiError, isoSeconds, isRecord, uuid, type Cloud } from './state.ts';

export type ImageStatus = 'queued' | 'saving' | 'uploading' | 'importing' | 'active' | 'killed' | 'deleted' | 'deactivated';

export interface Image {
  id: string;
  name: string | null;
  status: ImageStatus;
  diskFormat: string | null;
  containerFormat: string | null;
  visibility: 'public' | 'private' | 'shared' | 'community';
  protected: boolean;
  hidden: boolean;
  minDisk: number;
  minRam: number;
  size: number | null;
  virtualSize: number | null;
  checksum: string | null;
  hashValue: string | null;
  owner: string;
  tags: string[];
  properties: Record<string, string>;
  createdAt: number;
  updatedAt: number;
  /** How long storing the uploaded data took (the VIM's own work), for benchmarks. */
  storeMs?: number;
  /** Kept only for small images, so a download returns what was uploaded. */
  data: Buffer | undefined;
  staged: Buffer | undefined;
  preloaded: boolean;
}

const DISK_FORMATS = ['ami', 'ari', 'aki', 'vhd', 'vhdx', 'vmdk', 'raw', 'qcow2', 'vdi', 'iso', 'ploop'];
const CONTAINER_FORMATS = ['ami', 'ari', 'aki', 'bare', 'ovf', 'ova', 'docker', 'compressed'];
const READ_ONLY = [
  'status',
  'size',
  'virtual_size',
  'checksum',
  'os_hash_algo',
  'os_hash_value',
  'created_at',
  'updated_at',
  'self',
  'file',
  'schema',
  'direct_url',
  'locations',
  'stores',
];
const CORE = ['id', 'name', 'visibility', 'protected', 'os_hidden', 'min_disk', 'min_ram', 'disk_format', 'container_format', 'tags', 'owner'];
const KEEP_DATA_BYTES = 32 * 1024 * 1024;

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};
const EXPLANATION: Record<number, string> = {
  400: 'The server could not comply with the request since it is either malformed or otherwise incorrect.',
  403: 'Access was denied to this resource.',
  404: 'The resource could not be found.',
  409: 'There was a conflict when trying to complete your request.',
  413: 'The request is larger than the server is willing or able to process.',
  415: 'The request media type is not supported by this server.',
  500: 'The server has either erred or is incapable of performing the requested operation.',
};

/** webob's plain-text error page, which is what Glance answers. */
export function glanceError(err: ApiError): SimReply {
  const title = `${err.status} ${STATUS_TEXT[err.status] ?? 'Error'}`;
  return { status: err.status, body: `${title}\n\n${EXPLANATION[err.status] ?? ''}\n\n ${err.message}  `, contentType: 'text/plain; charset=UTF-8' };
}

export class Glance {
  readonly images = new Map<string, Image>();
  readonly router = new Router<Token>();

  constructor(private readonly cloud: Cloud) {
    this.#preload();
    this.#routes();
  }

  /** By id, or undefined; deleted images are gone. */
  get(id: string): Image | undefined {
    return this.images.get(id);
  }

  /** What Heat and Nova see: images visible to a project, by name. */
  byName(name: string, projectId: string): Image[] {
    return [...this.images.values()].filter((i) => i.name === name && this.#visible(i, projectId));
  }

  #visible(image: Image, projectId: string): boolean {
    return image.visibility === 'public' || image.visibility === 'community' || image.owner === projectId;
  }

  #preload(): void {
    // A stand-in for devstack's CirrOS: the real name and formats, small placeholder bytes.
    const data = Buffer.from('QFI\xfb simulated cirros-0.5.2-x86_64-disk image\n'.repeat(64), 'latin1');
    const now = Date.now();
    const image: Image = {
      id: uuid(),
      name: 'cirros-0.5.2-x86_64-disk',
      status: 'active',
      diskFormat: 'qcow2',
      containerFormat: 'bare',
      visibility: 'public',
      protected: false,
      hidden: false,
      minDisk: 0,
      minRam: 0,
      size: data.length,
      virtualSize: 117440512,
      checksum: createHash('md5').update(data).digest('hex'),
      hashValue: createHash('sha512').update(data).digest('hex'),
      owner: this.cloud.keystone.adminProject.id,
      tags: [],
      properties: { hw_rng_model: 'virtio', owner_specified_openstack_object: 'image' },
      createdAt: now,
      updatedAt: now,
      data,
      staged: undefined,
      preloaded: true,
    };
    this.images.set(image.id, image);
  }

  body(image: Image): Record<string, unknown> {
    return {
      ...image.properties,
      id: image.id,
      name: image.name,
      status: image.status,
      disk_format: image.diskFormat,
      container_format: image.containerFormat,
      visibility: image.visibility,
      size: image.size,
      virtual_size: image.virtualSize,
      checksum: image.checksum,
      os_hash_algo: image.hashValue ? 'sha512' : null,
      os_hash_value: image.hashValue,
      os_hidden: image.hidden,
      protected: image.protected,
      min_disk: image.minDisk,
      min_ram: image.minRam,
      owner: image.owner,
      tags: [...image.tags],
      created_at: isoSeconds(image.createdAt),
      updated_at: isoSeconds(image.updatedAt),
      self: `/v2/images/${image.id}`,
      file: `/v2/images/${image.id}/file`,
      schema: '/v2/schemas/image',
      ...(image.status === 'active' ? { stores: 'file' } : {}),
    };
  }

  #require(id: string, token: Token): Image {
    const image = this.images.get(id);
    if (!image || (!this.#visible(image, token.project?.id ?? '') && !this.cloud.keystone.isAdmin(token)))
      throw new ApiError(404, `No image found with ID ${id}`);
    return image;
  }

  #touch(image: Image): void {
    image.updatedAt = Date.now();
    this.cloud.sched.changed();
  }

  create(token: Token, input: Record<string, unknown>): Image {
    for (const key of READ_ONLY) if (key in input) throw new ApiError(403, `Attribute '${key}' is read-only.`);
    const id = input.id === undefined ? uuid() : String(input.id);
    if (input.id !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id))
      throw new ApiError(
        400,
        `Provided object does not match schema 'image': '${id}' does not match '^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$'`,
      );
    if (this.images.has(id)) throw new ApiError(409, `Image with identifier ${id} already exists!`);
    const now = Date.now();
    const image: Image = {
      id,
      name: null,
      status: 'queued',
      diskFormat: null,
      containerFormat: null,
      visibility: 'shared',
      protected: false,
      hidden: false,
      minDisk: 0,
      minRam: 0,
      size: null,
      virtualSize: null,
      checksum: null,
      hashValue: null,
      owner: token.project?.id ?? '',
      tags: [],
      properties: {},
      createdAt: now,
      updatedAt: now,
      data: undefined,
      staged: undefined,
      preloaded: false,
    };
    this.#apply(image, input, token);
    this.images.set(id, image);
    this.cloud.sched.changed();
    return image;
  }

  #apply(image: Image, input: Record<string, unknown>, token: Token): void {
    for (const [key, value] of Object.entries(input)) {
      if (key === 'id') continue;
      if (READ_ONLY.includes(key)) throw new ApiError(403, `Attribute '${key}' is read-only.`);
      switch (key) {
        case 'name':
          if (value !== null && typeof value !== 'string') throw schemaError(value, 'string');
          image.name = value;
          break;
        case 'disk_format':
          if (value !== null && (typeof value !== 'string' || !DISK_FORMATS.includes(value))) throw schemaError(value, `one of ${DISK_FORMATS.join(', ')}`);
          image.diskFormat = value;
          break;
        case 'container_format':
          if (value !== null && (typeof value !== 'string' || !CONTAINER_FORMATS.includes(value)))
            throw schemaError(value, `one of ${CONTAINER_FORMATS.join(', ')}`);
          image.containerFormat = value;
          break;
        case 'visibility':
          if (value !== 'public' && value !== 'private' && value !== 'shared' && value !== 'community')
            throw schemaError(value, "one of ['community', 'public', 'private', 'shared']");
          if (value === 'public' && !this.cloud.keystone.isAdmin(token)) throw new ApiError(403, 'You are not authorized to complete publicize_image action.');
          image.visibility = value;
          break;
        case 'protected':
        case 'os_hidden':
          if (typeof value !== 'boolean') throw schemaError(value, 'boolean');
          if (key === 'protected') image.protected = value;
          else image.hidden = value;
          break;
        case 'min_disk':
        case 'min_ram':
          if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw schemaError(value, 'integer');
          if (key === 'min_disk') image.minDisk = value;
          else image.minRam = value;
          break;
        case 'tags':
          if (!Array.isArray(value) || !value.every((t) => typeof t === 'string')) throw schemaError(value, 'array');
          image.tags = [...new Set(value as string[])];
          break;
        case 'owner':
          if (typeof value !== 'string') throw schemaError(value, 'string');
          image.owner = value;
          break;
        default:
          if (typeof value !== 'string') throw schemaError(value, 'string');
          image.properties[key] = value;
      }
    }
  }

  /** Stores uploaded data: the image is "saving" while the store writes, then active. */
  async #store(image: Image, from: 'queued' | 'uploading' | 'importing', data: AsyncIterable<Buffer> | Buffer, during: ImageStatus): Promise<void> {
    const md5 = createHash('md5');
    const sha = createHash('sha512');
    let size = 0;
    const kept: Buffer[] = [];
    const started = performance.now();
    image.status = during;
    this.#touch(image);
    try {
      const chunks: AsyncIterable<Buffer> | Buffer[] = Buffer.isBuffer(data) ? [data] : data;
      for await (const chunk of chunks) {
        md5.update(chunk);
        sha.update(chunk);
        size += chunk.length;
        if (size <= KEEP_DATA_BYTES) kept.push(chunk);
      }
      await this.cloud.sched.sleep(500);
    } catch (err) {
      if (this.images.get(image.id) === image) {
        image.status = from === 'importing' ? 'queued' : from;
        this.#touch(image);
      }
      throw err;
    }
    if (this.images.get(image.id) !== image) throw new ApiError(410, `Image ${image.id} was deleted during upload`);
    image.size = size;
    image.virtualSize = image.diskFormat === 'raw' ? size : null;
    image.checksum = md5.digest('hex');
    image.hashValue = sha.digest('hex');
    image.data = size <= KEEP_DATA_BYTES ? Buffer.concat(kept) : undefined;
    image.status = 'active';
    image.storeMs = performance.now() - started;
    this.#touch(image);
  }

  /** Where clients reach Glance, as Nova's image API builds links to it (the catalog's image endpoint). */
  publicUrl(origin: string): string {
    return `${origin}/image`;
  }

  /** Nova uploading a server snapshot: the driver sets the formats, then the data goes through the store. */
  async storeSnapshot(image: Image, data: Buffer, diskFormat: string | null): Promise<void> {
    if (diskFormat !== null) {
      image.diskFormat = diskFormat;
      image.containerFormat = 'bare';
    }
    await this.#store(image, 'queued', data, 'saving');
  }

  #checkUploadable(image: Image, allowed: ImageStatus[], action: string): void {
    if (!image.diskFormat || !image.containerFormat) throw new ApiError(400, 'Properties disk_format, container_format must be set prior to saving data.');
    if (!allowed.includes(image.status)) throw new ApiError(409, `Image status transition from ${image.status} to ${action} is not allowed`);
  }

  #list(req: SimRequest, token: Token): SimReply {
    const q = req.query;
    const limit = Math.min(Number(q.get('limit') ?? 25) || 25, 1000);
    const marker = q.get('marker');
    const sortKey = q.get('sort_key') ?? 'created_at';
    const sortDir = q.get('sort_dir') ?? 'desc';
    const project = token.project?.id ?? '';
    let list = [...this.images.values()].filter((i) => this.#visible(i, project) || this.cloud.keystone.isAdmin(token));
    const eq = (key: string, get: (i: Image) => unknown) => {
      const value = q.get(key);
      if (value === null) return;
      if (value.startsWith('in:')) {
        const options = value.slice(3).split(',');
        list = list.filter((i) => options.includes(String(get(i))));
      } else list = list.filter((i) => String(get(i)) === value);
    };
    eq('name', (i) => i.name);
    eq('status', (i) => i.status);
    eq('visibility', (i) => i.visibility);
    eq('owner', (i) => i.owner);
    eq('disk_format', (i) => i.diskFormat);
    eq('container_format', (i) => i.containerFormat);
    eq('id', (i) => i.id);
    eq('protected', (i) => i.protected);
    if (q.get('os_hidden') !== 'true') list = list.filter((i) => !i.hidden);
    for (const tag of q.getAll('tag')) list = list.filter((i) => i.tags.includes(tag));
    const field = (i: Image): string | number => {
      if (sortKey === 'name') return i.name ?? '';
      if (sortKey === 'size') return i.size ?? 0;
      if (sortKey === 'updated_at') return i.updatedAt;
      return i.createdAt;
    };
    list.sort((a, b) => {
      const x = field(a);
      const y = field(b);
      const c = x < y ? -1 : x > y ? 1 : a.id.localeCompare(b.id);
      return sortDir === 'asc' ? c : -c;
    });
    if (marker) {
      const at = list.findIndex((i) => i.id === marker);
      if (at < 0) throw new ApiError(400, `Invalid marker. Image ${marker} could not be found.`);
      list = list.slice(at + 1);
    }
    const page = list.slice(0, limit);
    const body: Record<string, unknown> = { images: page.map((i) => this.body(i)), first: '/v2/images', schema: '/v2/schemas/images' };
    if (list.length > limit && page.length > 0) {
      const next = new URLSearchParams(q);
      next.set('marker', (page[page.length - 1] as Image).id);
      body.next = `/v2/images?${next.toString()}`;
    }
    return json(200, body);
  }

  #routes(): void {
    const r = this.router;
    const versions = (req: SimRequest) =>
      json(300, {
        versions: ['2.16', '2.15', '2.9', '2.7', '2.6', '2.5', '2.4', '2.3', '2.2', '2.1', '2.0'].map((id, n) => ({
          id: `v${id}`,
          status: n === 0 ? 'CURRENT' : 'SUPPORTED',
          links: [{ rel: 'self', href: `${req.origin}/image/v2/` }],
        })),
      });
    r.on('GET', '/', versions);
    r.on('GET', '/versions', (req) => ({ ...versions(req), status: 200 }));
    r.on('GET', '/v2/images', (req, _p, token) => this.#list(req, token));
    r.on('POST', '/v2/images', async (req, _p, token) => {
      const body = await req.json();
      if (!isRecord(body)) throw new ApiError(400, 'Malformed request body');
      const image = this.create(token, body);
      return json(201, this.body(image), { location: `${req.origin}/image/v2/images/${image.id}` });
    });
    r.on('GET', '/v2/images/:id', (_req, { id }, token) => json(200, this.body(this.#require(id ?? '', token))));
    r.on('PATCH', '/v2/images/:id', async (req, { id }, token) => {
      const image = this.#require(id ?? '', token);
      if (image.owner !== token.project?.id && !this.cloud.keystone.isAdmin(token)) throw new ApiError(403, 'You are not permitted to modify this image.');
      const ops = await req.json();
      if (!Array.isArray(ops)) throw new ApiError(400, 'Request body must be a JSON array of operation objects.');
      for (const op of ops) {
        if (!isRecord(op) || typeof op.op !== 'string' || typeof op.path !== 'string')
          throw new ApiError(400, 'Operation objects must contain exactly one member named "op" and "path".');
        const key = op.path.replace(/^\//, '');
        if (READ_ONLY.includes(key) || key === 'id') throw new ApiError(403, `Attribute '${key}' is read-only.`);
        if (op.op === 'remove') {
          if (CORE.includes(key)) throw new ApiError(403, `Attribute '${key}' is reserved.`);
          if (!(key in image.properties)) throw new ApiError(409, `Property ${key} does not exist.`);
          delete image.properties[key];
        } else if (op.op === 'add' || op.op === 'replace') {
          if (op.op === 'replace' && !CORE.includes(key) && !(key in image.properties)) throw new ApiError(409, `Property ${key} does not exist.`);
          this.#apply(image, { [key]: op.value }, token);
        } else throw new ApiError(400, `Invalid operation: \`${op.op}\`: Unable to find \`op\` in JSON Schema change.`);
      }
      this.#touch(image);
      return json(200, this.body(image));
    });
    r.on('DELETE', '/v2/images/:id', (_req, { id }, token) => {
      const image = this.#require(id ?? '', token);
      if (image.owner !== token.project?.id && !this.cloud.keystone.isAdmin(token)) throw new ApiError(403, 'You are not permitted to delete this image.');
      if (image.protected) throw new ApiError(403, `Image ${image.id} is protected and cannot be deleted.`);
      this.images.delete(image.id);
      this.cloud.sched.changed();
      return empty(204);
    });
    r.on('PUT', '/v2/images/:id/file', async (req, { id }, token) => {
      const image = this.#require(id ?? '', token);
      const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim();
      if (type !== 'application/octet-stream') throw new ApiError(415, `Content type ${type || 'None'} is not supported`);
      this.#checkUploadable(image, ['queued'], 'saving');
      await this.#store(image, 'queued', req.raw, 'saving');
      return empty(204);
    });
    r.on('GET', '/v2/images/:id/file', (_req, { id }, token) => {
      const image = this.#require(id ?? '', token);
      if (image.status !== 'active') {
        if (image.size === null) return empty(204);
        throw new ApiError(403, 'The requested image has been deactivated. Image data download is forbidden.');
      }
      if (!image.data) throw new ApiError(503, 'The simulator keeps the data of images up to 32 MiB only.');
      return { status: 200, body: image.data, headers: { 'content-md5': image.checksum ?? '' }, contentType: 'application/octet-stream' };
    });
    r.on('PUT', '/v2/images/:id/stage', async (req, { id }, token) => {
      const image = this.#require(id ?? '', token);
      if (image.status !== 'queued') throw new ApiError(409, `Image status transition from ${image.status} to uploading is not allowed`);
      image.status = 'uploading';
      this.#touch(image);
      image.staged = await req.bytes();
      return empty(204);
    });
    r.on('POST', '/v2/images/:id/import', async (req, { id }, token) => {
      const image = this.#require(id ?? '', token);
      const body = await req.json();
      const method = isRecord(body) && isRecord(body.method) ? body.method : undefined;
      const name = method?.name;
      if (name === 'glance-direct') {
        if (image.status !== 'uploading' || !image.staged) throw new ApiError(409, `Image status transition from ${image.status} to importing is not allowed`);
        const staged = image.staged;
        image.staged = undefined;
        this.cloud.sched.spawn(() => this.#store(image, 'uploading', staged, 'importing'));
      } else if (name === 'web-download') {
        const uri = method?.uri;
        if (typeof uri !== 'string' || !/^https?:\/\//.test(uri)) throw new ApiError(400, `URI for web-download does not pass filtering: ${String(uri)}`);
        this.#checkUploadable(image, ['queued'], 'importing');
        image.status = 'importing';
        this.#touch(image);
        this.cloud.sched.spawn(async () => {
          try {
            const response = await fetch(uri);
            if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
            await this.#store(image, 'importing', Buffer.from(await response.arrayBuffer()), 'importing');
          } catch (err) {
            if (this.images.get(image.id) === image && image.status !== 'active') {
              image.status = 'queued';
              image.properties.os_glance_failed_import = 'file';
              this.#touch(image);
            }
            this.cloud.log(`glance: web-download of ${uri} failed: ${String(err)}`);
          }
        });
      } else throw new ApiError(400, `Import method ${String(name)} is not valid for this image.`);
      return empty(202);
    });
    r.on('GET', '/v2/info/import', () =>
      json(200, { 'import-methods': { description: 'Import methods available.', type: 'array', value: ['glance-direct', 'web-download'] } }),
    );
    r.on('GET', '/v2/schemas/image', () => json(200, { name: 'image', additionalProperties: { type: 'string' }, properties: {} }));
  }
}

function schemaError(value: unknown, expected: string): ApiError {
  return new ApiError(400, `Provided object does not match schema 'image': ${JSON.stringify(value)} is not ${expected}`);
}
