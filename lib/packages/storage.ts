// Where package bytes live: one S3 prefix per package. The uploaded CSAR, the files onboarding
// took out of it, the parsed VNFD and the artifact index all sit under packages/<id>/, so removing
// a package is removing its prefix, and nothing of one package is ever written outside its own.
import { DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Upload } from '@aws-sdk/lib-storage';
import type { Readable } from 'node:stream';
import { requiredEnv } from '#lib/store/dynamo.ts';
import type { ByteSource } from './byte-source.ts';
import { awsClient } from '#lib/aws-client.ts';

let client: S3Client | undefined;
function s3(): S3Client {
  client ??= awsClient(new S3Client({}));
  return client;
}

export const CONTENT_FILE = 'package.zip';
export const contentKey = (packageId: string): string => `packages/${packageId}/${CONTENT_FILE}`;
export const onboardedKey = (packageId: string, name: string): string => `packages/${packageId}/onboarded/${name}`;
export const extractedKey = (packageId: string, path: string): string => `packages/${packageId}/onboarded/files/${path}`;

/** The package id of a content key, or undefined for any other key. */
export function packageIdOfContentKey(key: string): string | undefined {
  return /^packages\/([0-9a-f-]{36})\/package\.zip$/.exec(key)?.[1];
}

export function bucket(): string {
  return requiredEnv('PACKAGES_BUCKET');
}

/** Smallest part S3 accepts: for a copy made beside other work, where memory matters more than speed. */
export const SMALL_PARTS = { partSize: 5 * 1024 * 1024, queueSize: 1 } as const;

export async function putObject(
  key: string,
  body: Buffer | string | Readable,
  contentType: string,
  parts: { partSize: number; queueSize: number } = { partSize: 8 * 1024 * 1024, queueSize: 2 },
): Promise<void> {
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    await s3().send(new PutObjectCommand({ Bucket: bucket(), Key: key, Body: body, ContentType: contentType }));
    return;
  }
  // A stream of unknown length: multipart upload in bounded parts.
  await new Upload({ client: s3(), params: { Bucket: bucket(), Key: key, Body: body, ContentType: contentType }, ...parts }).done();
}

export async function objectSize(key: string): Promise<number | undefined> {
  try {
    const out = await s3().send(new HeadObjectCommand({ Bucket: bucket(), Key: key }));
    return out.ContentLength;
  } catch (error) {
    if (error instanceof Error && (error.name === 'NotFound' || error.name === 'NoSuchKey')) return undefined;
    throw error;
  }
}

export async function getBytes(key: string, range?: { start: number; end: number }): Promise<Buffer> {
  const out = await s3().send(new GetObjectCommand({ Bucket: bucket(), Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }));
  return Buffer.from(await out.Body!.transformToByteArray());
}

export async function getStream(key: string, range?: { start: number; end: number }): Promise<Readable> {
  const out = await s3().send(new GetObjectCommand({ Bucket: bucket(), Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }));
  return out.Body as Readable;
}

export async function getJson<T>(key: string): Promise<T> {
  return JSON.parse((await getBytes(key)).toString('utf8')) as T;
}

export function presignedPut(key: string, expiresInSeconds: number): Promise<string> {
  return getSignedUrl(s3(), new PutObjectCommand({ Bucket: bucket(), Key: key, ContentType: 'application/zip' }), { expiresIn: expiresInSeconds });
}

export function presignedGet(key: string, expiresInSeconds: number, contentType: string): Promise<string> {
  return getSignedUrl(s3(), new GetObjectCommand({ Bucket: bucket(), Key: key, ResponseContentType: contentType }), { expiresIn: expiresInSeconds });
}

export async function deletePrefix(prefix: string): Promise<void> {
  let token: string | undefined;
  do {
    const page = await s3().send(new ListObjectsV2Command({ Bucket: bucket(), Prefix: prefix, ContinuationToken: token }));
    const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key as string }));
    if (keys.length) await s3().send(new DeleteObjectsCommand({ Bucket: bucket(), Delete: { Objects: keys, Quiet: true } }));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}

/** Random access to an S3 object by ranged GETs, in bounded reads. */
export async function s3Source(key: string): Promise<ByteSource> {
  const size = await objectSize(key);
  if (size === undefined) throw new Error(`s3://${bucket()}/${key} does not exist`);
  return {
    size,
    read: async (offset, length) => {
      if (length <= 0 || offset >= size) return Buffer.alloc(0);
      return getBytes(key, { start: offset, end: Math.min(size, offset + length) - 1 });
    },
  };
}

/** The operator's trust store for package signatures: PEM CA certificates in one S3 object. */
export const TRUST_STORE_KEY = 'trust-store/ca-bundle.pem';

export function splitPemCertificates(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

let trustStore: { anchors: string[]; loadedAt: number } | undefined;

/** CA certificates package signatures must chain to; re-read every five minutes so a rotation takes effect. */
export async function trustAnchors(): Promise<string[]> {
  if (trustStore && Date.now() - trustStore.loadedAt < 5 * 60_000) return trustStore.anchors;
  let anchors: string[] = [];
  if ((await objectSize(TRUST_STORE_KEY)) !== undefined) anchors = splitPemCertificates((await getBytes(TRUST_STORE_KEY)).toString('utf8'));
  trustStore = { anchors, loadedAt: Date.now() };
  return anchors;
}
