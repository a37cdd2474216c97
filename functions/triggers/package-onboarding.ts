// S3 ObjectCreated trigger: a CSAR landed at packages/<id>/package.zip (API upload, presigned PUT,
// upload_from_uri or a direct put), so that package is onboarded.
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import type { S3Event } from 'aws-lambda';
import { coreDeps } from '#lib/deps.ts';
import { onboardPackage } from '#lib/packages/onboarding.ts';
import { packageIdOfContentKey, trustAnchors } from '#lib/packages/storage.ts';
import { log } from '#lib/log.ts';
import { instrumented } from '#lib/metrics.ts';

const handle = async (event: S3Event): Promise<{ onboarded: Record<string, string> }> => {
  const onboarded: Record<string, string> = {};
  for (const record of event.Records) {
    // S3 URL-encodes keys in events (spaces as "+").
    const key = decodeURIComponent(record.s3.object.key.replace(/\+/g, ' '));
    const packageId = packageIdOfContentKey(key);
    if (!packageId) {
      log.warn('ignored an object that is not package content', { key });
      continue;
    }
    onboarded[packageId] = await onboardPackage(coreDeps(), packageId, {
      trustAnchors: await trustAnchors(),
      requireSignature: process.env.REQUIRE_PACKAGE_SIGNATURE === 'true',
    });
  }
  return { onboarded };
};

export const handler = instrumented(handle);
