// upload_from_uri: downloads a CSAR from the NFVO's (or vendor's) server straight into the
// package's content key, streaming, with the credentials taken from the secret store and deleted
// after use. Failures put the package back to CREATED with the reason.
import { Readable } from 'node:stream';
import { PackageError } from './errors.ts';
import { contentKey, putObject } from './storage.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { log } from '#lib/log.ts';
import { withoutUserinfo } from '#lib/redact.ts';
import { assertEgressAllowed, EgressDeniedError, egressPolicyFromEnv } from '#lib/egress.ts';

export interface FetchInput {
  packageId: string;
  uri: string;
  credentialsSecret?: string;
}

interface Credentials {
  userName?: string;
  password?: string;
  oauth2?: { clientId: string; clientPassword: string; tokenEndpoint: string };
}

const MAX_CSAR_BYTES = 8 * 1024 ** 3;

const MAX_REDIRECTS = 5;

/** Cloud metadata endpoints (and, by policy, private networks) must never be reachable through a package URI. */
async function refuseDeniedAddress(uri: string): Promise<void> {
  try {
    await assertEgressAllowed(uri, egressPolicyFromEnv());
  } catch (error) {
    if (error instanceof EgressDeniedError) throw new PackageError(`the egress policy refuses this address: ${error.reason}`, uri);
    throw error;
  }
}

/** fetch, with every redirect target checked against the egress policy before it is followed. */
async function checkedFetch(uri: string, init: RequestInit): Promise<Response> {
  let target = uri;
  let headers = new Headers(init.headers);
  for (let hop = 0; ; hop++) {
    await refuseDeniedAddress(target);
    const response = await fetch(target, { ...init, headers, redirect: 'manual' });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location) return response;
    if (hop === MAX_REDIRECTS) throw new PackageError(`more than ${MAX_REDIRECTS} redirects`, uri);
    const next = new URL(location, target);
    // As fetch does: credentials do not follow a redirect to another origin.
    if (next.origin !== new URL(target).origin) {
      headers = new Headers(headers);
      headers.delete('authorization');
    }
    target = next.href;
  }
}

async function authorization(credentials: Credentials | undefined): Promise<string | undefined> {
  if (!credentials) return undefined;
  if (credentials.oauth2) {
    const { clientId, clientPassword, tokenEndpoint } = credentials.oauth2;
    const response = await checkedFetch(tokenEndpoint, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`${clientId}:${clientPassword}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    });
    if (!response.ok) throw new PackageError(`the token endpoint answered ${response.status}`, tokenEndpoint);
    const token = (await response.json()) as { access_token?: string };
    if (!token.access_token) throw new PackageError('the token endpoint returned no access_token', tokenEndpoint);
    return `Bearer ${token.access_token}`;
  }
  if (credentials.userName !== undefined) return `Basic ${Buffer.from(`${credentials.userName}:${credentials.password ?? ''}`).toString('base64')}`;
  return undefined;
}

export async function fetchPackageContent(deps: CoreDeps, input: FetchInput): Promise<{ bytes: number }> {
  let credentials: Credentials | undefined;
  try {
    if (input.credentialsSecret) credentials = (await deps.secrets.read(input.credentialsSecret)) as Credentials;
    const auth = await authorization(credentials);
    const response = await checkedFetch(input.uri, { headers: { Accept: 'application/zip, */*', ...(auth ? { Authorization: auth } : {}) } });
    if (!response.ok || !response.body) throw new PackageError(`the server answered ${response.status} ${response.statusText}`, input.uri);
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (declared > MAX_CSAR_BYTES) throw new PackageError(`the package is ${declared} bytes; at most ${MAX_CSAR_BYTES} are accepted`, input.uri);
    let bytes = 0;
    const counted = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>).map((chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_CSAR_BYTES) throw new PackageError(`the package exceeds ${MAX_CSAR_BYTES} bytes`, input.uri);
      return chunk;
    });
    await putObject(contentKey(input.packageId), counted, 'application/zip');
    return { bytes };
  } catch (error) {
    // The URI is refused with userinfo, but a redirect or an error message may still carry some.
    const detail = withoutUserinfo(
      error instanceof PackageError
        ? `Downloading the package failed: ${error.where ? `${error.where}: ` : ''}${error.message}`
        : `Downloading the package from ${input.uri} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
    log.warn('upload_from_uri failed', { packageId: input.packageId, uri: input.uri, detail });
    await deps.packages.change(input.packageId, {
      from: { onboardingState: ['UPLOADING'] },
      set: { onboardingState: 'CREATED', onboardingFailureDetails: { title: 'VNF package upload failed', status: 422, detail } },
    });
    return { bytes: -1 };
  } finally {
    if (input.credentialsSecret) await deps.secrets.remove(input.credentialsSecret).catch(() => undefined);
  }
}
