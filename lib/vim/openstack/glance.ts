// A thin Glance v2 client: what the driver needs to put a package's software images on the VIM and
// to find images that are already there. Image data is streamed from the package, never buffered.
import { Readable } from 'node:stream';
import * as z from 'zod';
import type { OpenStackSession } from './keystone.ts';

const imageSchema = z
  .object({
    id: z.string(),
    name: z.string().nullish(),
    status: z.string(),
    disk_format: z.string().nullish(),
    container_format: z.string().nullish(),
    size: z.number().nullish(),
  })
  .passthrough();
export type GlanceImage = z.infer<typeof imageSchema>;

export interface NewImage {
  name: string;
  diskFormat: string;
  containerFormat: string;
  /** GiB, as Glance counts it. */
  minDisk?: number;
  /** MiB. */
  minRam?: number;
  /** Extra image properties (strings, as Glance stores them). */
  properties?: Record<string, string>;
}

/** Glance's catalog URL is unversioned (devstack: http://host/image). */
const v2 = (base: string): string => (/\/v2$/.test(base) ? base : `${base}/v2`);

export class GlanceClient {
  constructor(private readonly session: OpenStackSession) {}

  async createImage(image: NewImage): Promise<GlanceImage> {
    const response = await this.session.request(
      'glance',
      'image',
      '/images',
      {
        method: 'POST',
        what: `creating image ${image.name}`,
        json: {
          ...image.properties,
          name: image.name,
          disk_format: image.diskFormat,
          container_format: image.containerFormat,
          ...(image.minDisk !== undefined ? { min_disk: image.minDisk } : {}),
          ...(image.minRam !== undefined ? { min_ram: image.minRam } : {}),
        },
      },
      v2,
    );
    return this.session.json('glance', response, imageSchema, `creating image ${image.name}`);
  }

  /** Uploads the image data; `open` is called again if the upload has to be retried after re-authentication. */
  async uploadData(id: string, open: () => Promise<NodeJS.ReadableStream>): Promise<void> {
    await this.session.request(
      'glance',
      'image',
      `/images/${encodeURIComponent(id)}/file`,
      {
        method: 'PUT',
        what: `uploading the data of image ${id}`,
        untimed: true,
        body: async () => {
          const stream = await open();
          const readable = stream instanceof Readable ? stream : Readable.from(stream as AsyncIterable<Buffer>);
          return { body: Readable.toWeb(readable) as ReadableStream<Uint8Array>, contentType: 'application/octet-stream' };
        },
        accept: [201, 204],
      },
      v2,
    );
  }

  /** The image, or undefined if Glance does not know it. */
  async getImage(id: string): Promise<GlanceImage | undefined> {
    const response = await this.session.request(
      'glance',
      'image',
      `/images/${encodeURIComponent(id)}`,
      { what: `reading image ${id}`, accept: [200, 404] },
      v2,
    );
    if (response.status === 404) {
      await response.body?.cancel();
      return undefined;
    }
    return this.session.json('glance', response, imageSchema, `reading image ${id}`);
  }

  /** Images with exactly this name (Glance names are not unique). */
  async findByName(name: string): Promise<GlanceImage[]> {
    const query = new URLSearchParams({ name, limit: '100' });
    const response = await this.session.request('glance', 'image', `/images?${query}`, { what: `looking up image ${name}` }, v2);
    const body = await this.session.json('glance', response, z.object({ images: z.array(imageSchema) }).passthrough(), `looking up image ${name}`);
    return body.images.filter((image) => image.name === name);
  }

  /** Deletes the image; one that is already gone is fine. */
  async deleteImage(id: string): Promise<void> {
    const response = await this.session.request(
      'glance',
      'image',
      `/images/${encodeURIComponent(id)}`,
      { method: 'DELETE', what: `deleting image ${id}`, accept: [204, 200, 404] },
      v2,
    );
    await response.body?.cancel();
  }
}
