// The software images of a VNF on Glance: uploading a package's images (or taking the granted or
// already present ones), waiting for them to become active, and deleting those the driver created.
// Images are named after the VNF instance (and, for a package change, the new package), so a
// retried step or a rollback with a lost state finds them again.
import * as z from 'zod';
import { log } from '#lib/log.ts';
import type { ParsedVnfd, SoftwareImageInfo } from '#lib/packages/vnfd/model.ts';
import type { GrantDecision, PackageFiles } from '#lib/vim/driver.ts';
import { VimError } from './errors.ts';
import type { GlanceClient } from './glance.ts';
import { flavourOf } from './hot.ts';

export const imageRecord = z.object({
  /** Glance image id. */
  id: z.string(),
  /** The VNFD node (VDU or storage) whose software image it is. */
  imageId: z.string(),
  /** Whether this driver created (and so must delete) it. */
  created: z.boolean(),
});
export type ImageRecord = z.infer<typeof imageRecord>;

/** The package whose images are wanted: the instance's own, or the one a package change moves to. */
export interface ImageSource {
  vnfInstanceId: string;
  vnfd: ParsedVnfd;
  flavourId: string;
  files: PackageFiles;
  grant: GrantDecision;
}

export const imageNameOf = (vnfInstanceId: string, imageId: string): string => `vnf-${vnfInstanceId}-${imageId}`;

const GIB = 2 ** 30;
const MIB = 2 ** 20;
/** Glance statuses from which an image will never become active. */
const DEAD_IMAGE = new Set(['killed', 'deleted', 'pending_delete', 'deactivated']);

/** The VNFD nodes of the flavour that boot from or are filled with a software image. */
export function imageOwners(source: Pick<ImageSource, 'vnfd' | 'flavourId'>): Array<{ owner: string; name: string }> {
  const flavour = flavourOf(source.vnfd, source.flavourId);
  return [
    ...flavour.vdus.flatMap((vdu) => (vdu.swImage ? [{ owner: vdu.id, name: vdu.swImage.name }] : [])),
    ...flavour.storages.flatMap((storage) => (storage.swImage ? [{ owner: storage.id, name: storage.swImage.name }] : [])),
  ];
}

async function uploadPackagedImage(
  source: ImageSource,
  glance: GlanceClient,
  owner: string,
  image: SoftwareImageInfo & { imagePath: string },
  name: string,
): Promise<string> {
  // A retried step finds its own earlier upload: keep a finished one, drop an unfinished one.
  for (const existing of await glance.findByName(name)) {
    if (existing.status === 'active') return existing.id;
    await glance.deleteImage(existing.id);
  }
  const created = await glance.createImage({
    name,
    diskFormat: image.diskFormat,
    containerFormat: image.containerFormat,
    minDisk: Math.ceil(image.minDisk / GIB),
    ...(image.minRam !== undefined ? { minRam: Math.ceil(image.minRam / MIB) } : {}),
  });
  log.info('openstack: uploading software image', { vnfInstanceId: source.vnfInstanceId, imageId: owner, glanceImageId: created.id, bytes: image.size });
  try {
    await glance.uploadData(created.id, () => source.files.stream(image.imagePath));
  } catch (error) {
    await glance.deleteImage(created.id).catch(() => undefined);
    throw error;
  }
  return created.id;
}

export interface ResolveOptions {
  /** The Glance name of an uploaded image (default `vnf-<instanceId>-<imageId>`). */
  nameOf?: (owner: string) => string;
  /** Only these image owners (VDU or storage ids); default every owner of the flavour. */
  owners?: ReadonlySet<string>;
}

/** Fills `records` as it goes, so a caller whose step fails half-way knows what to remove. */
export async function resolveImages(source: ImageSource, glance: GlanceClient, records: ImageRecord[], options: ResolveOptions = {}): Promise<void> {
  const nameOf = options.nameOf ?? ((owner: string) => imageNameOf(source.vnfInstanceId, owner));
  // Nodes often share one image file (a VDU and its volume); it is uploaded once.
  const uploaded = new Map<string, string>();
  for (const { owner, name } of imageOwners(source)) {
    if (options.owners && !options.owners.has(owner)) continue;
    const granted = source.grant.images?.[owner];
    if (granted) {
      records.push({ id: granted, imageId: owner, created: false });
      continue;
    }
    const packaged = source.vnfd.softwareImages.find(
      (image): image is SoftwareImageInfo & { imagePath: string } => image.id === owner && image.imagePath !== undefined,
    );
    if (packaged) {
      const key = `${packaged.imagePath}\0${packaged.checksum.algorithm}\0${packaged.checksum.hash}`;
      const known = uploaded.get(key);
      if (known) {
        records.push({ id: known, imageId: owner, created: false });
      } else {
        const id = await uploadPackagedImage(source, glance, owner, packaged, nameOf(owner));
        uploaded.set(key, id);
        records.push({ id, imageId: owner, created: true });
      }
      continue;
    }
    const found = (await glance.findByName(name)).filter((image) => image.status === 'active');
    if (!found[0]) {
      throw new VimError('glance', `software image ${name} of ${owner} is not granted, not in the VNF package and not an active image in Glance`);
    }
    records.push({ id: found[0].id, imageId: owner, created: false });
  }
}

/** Unique ids of the images this driver created. */
export const createdImages = (images: ImageRecord[]): string[] => [...new Set(images.filter((image) => image.created).map((image) => image.id))];

/** Whether the images this driver created are all active yet, or why they never will be. */
export async function imagesReady(glance: GlanceClient, images: ImageRecord[]): Promise<{ failed?: string; pending: boolean }> {
  let pending = false;
  for (const id of createdImages(images)) {
    const image = await glance.getImage(id);
    if (!image) return { failed: `Glance image ${id} disappeared before it became active`, pending: false };
    if (DEAD_IMAGE.has(image.status)) return { failed: `Glance image ${id} (${image.name ?? ''}) is ${image.status}`, pending: false };
    if (image.status !== 'active') pending = true;
  }
  return { pending };
}

/** Deletes these images, and any image with one of these names (what a lost or partial state would have recorded). */
export async function deleteImages(glance: GlanceClient, vnfInstanceId: string, ids: Iterable<string>, names: Iterable<string>): Promise<void> {
  const all = new Set(ids);
  for (const name of new Set(names)) {
    for (const found of await glance.findByName(name)) all.add(found.id);
  }
  for (const id of all) {
    log.info('openstack: deleting software image', { vnfInstanceId, glanceImageId: id });
    await glance.deleteImage(id);
  }
}
