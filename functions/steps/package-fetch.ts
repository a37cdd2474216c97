// Step Functions task of upload_from_uri: downloads the CSAR into the package's content key (its
// S3 event then starts onboarding). A failed download is recorded on the package, not thrown.
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import { coreDeps } from '#lib/deps.ts';
import { fetchPackageContent, type FetchInput } from '#lib/packages/fetch.ts';
import { instrumented } from '#lib/metrics.ts';

const handle = async (input: FetchInput): Promise<{ packageId: string; bytes: number }> => {
  const { bytes } = await fetchPackageContent(coreDeps(), input);
  return { packageId: input.packageId, bytes };
};

export const handler = instrumented(handle);
