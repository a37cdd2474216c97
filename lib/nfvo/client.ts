// The VNFM's connection to its NFVO, for every interface the NFVO serves the VNFM (SOL003 granting
// now; package management and coordination can use it the same way). One setting names the NFVO:
// NFVO_ENDPOINT (template NfvoEndpoint), or GRANT_ENDPOINT (NfvoGrantEndpoint), the older
// grant-only form. Optional OAuth 2.0 client credentials (NFVO_TOKEN_URL, NFVO_CLIENT_ID, the client
// secret in Secrets Manager as <SECRETS_PREFIX>nfvo/credentials) and mutual TLS (a certificate and
// key in the same secret, with the CA of the NFVO's server certificate if it is a private one). Calls go through the egress policy with a time limit each, and are tried
// again on 5xx, 429 and a lost connection as Retry-After says, within bounds.
import { EgressDeniedError, egressPolicyFromEnv, egressRequest, type EgressPolicy, type EgressResponse } from '#lib/egress.ts';
import { accessToken, forgetAccessToken } from '#lib/notify/callback.ts';
import type { SecretStore } from '#lib/secrets/vim-access.ts';

/** The NFVO's credentials under the secrets prefix: `{clientSecret?, certificate?, privateKey?}` (`npm run nfvo-secret`). */
export const NFVO_SECRET_NAME = 'nfvo/credentials';
export const NFVO_CALL_TIMEOUT_MS = 10_000;
/** Attempts of one call, and the most it waits between them in all: a step must not wait long inside a Lambda. */
export const NFVO_MAX_ATTEMPTS = 3;
export const NFVO_MAX_RETRY_WAIT_MS = 30_000;
const FIRST_RETRY_MS = 1_000;
/** A warm function reads the NFVO's credentials again after this long (a rotated secret is seen then). */
const SECRET_MAX_AGE_MS = 5 * 60_000;

export interface NfvoSettings {
  /** The NFVO's API root, without a trailing slash (`<endpoint>/grant/v1/grants`). */
  endpoint: string;
  tokenUrl?: string;
  clientId?: string;
  /** Where the client secret and the TLS client certificate are (Secrets Manager name). */
  secretId: string;
}

/** The configured NFVO, or undefined when there is none (the VNFM then grants itself). */
export function nfvoSettings(env: NodeJS.ProcessEnv = process.env): NfvoSettings | undefined {
  const endpoint = (env.NFVO_ENDPOINT || env.GRANT_ENDPOINT || '').replace(/\/+$/, '');
  if (!endpoint) return undefined;
  return {
    endpoint,
    ...(env.NFVO_TOKEN_URL ? { tokenUrl: env.NFVO_TOKEN_URL } : {}),
    ...(env.NFVO_CLIENT_ID ? { clientId: env.NFVO_CLIENT_ID } : {}),
    secretId: `${env.SECRETS_PREFIX ?? ''}${NFVO_SECRET_NAME}`,
  };
}

export interface NfvoSecret {
  clientSecret?: string;
  /** PEM client certificate and key, for an https NFVO that asks for mutual TLS. */
  certificate?: string;
  privateKey?: string;
  /** PEM CA certificate(s) the NFVO's server certificate is trusted by, instead of the public CAs. */
  caCertificate?: string;
  /** An OAuth 2.0 client of the VNFM's own issuer, made for the NFVO: it calls back with it (package notifications). */
  callbackClientId?: string;
  callbackClientSecret?: string;
}

/** Stores the NFVO's credentials (a new version of the secret if it exists); returns the secret's id. */
export function saveNfvoCredentials(secrets: Pick<SecretStore, 'put'>, value: NfvoSecret): Promise<string> {
  return secrets.put(`nfvo/credentials`, { ...value });
}

/** Milliseconds a Retry-After header asks for (delta-seconds or an HTTP-date), or undefined without a usable one. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface NfvoCall {
  method: 'GET' | 'POST';
  /** The Version header of the NFVO's API (SOL013 9.1). */
  version: string;
  body?: unknown;
  /** What to accept (JSON unless said); with `stream`, a 2xx body is handed over unread (lib/egress.ts). */
  accept?: string;
  stream?: boolean;
}

export interface NfvoClientOptions {
  secrets: Pick<SecretStore, 'read'>;
  settings: NfvoSettings;
  /** How the client waits between attempts (tests hand in their own). */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class NfvoClient {
  private readonly origin: string;
  private readonly trusted: Set<string>;

  constructor(private readonly options: NfvoClientOptions) {
    this.origin = new URL(options.settings.endpoint).origin;
    this.trusted = new Set([this.origin, ...(options.settings.tokenUrl ? [new URL(options.settings.tokenUrl).origin] : [])]);
  }

  /** A path under the NFVO's endpoint, or a URL the NFVO gave (a Location), resolved against it. */
  url(target: string): string {
    return /^https?:\/\//i.test(target) ? target : `${this.options.settings.endpoint}/${target.replace(/^\/+/, '')}`;
  }

  /**
   * The operator configured the NFVO and its token endpoint, so they may sit on a private network
   * whatever EgressAllowPrivateNetworks says; metadata and link-local addresses stay refused. Any
   * other address (a Location pointing elsewhere) is held to the deployment's policy.
   */
  private policyFor(url: string): EgressPolicy {
    return this.trusted.has(new URL(url).origin) ? { allowPrivateNetworks: true } : egressPolicyFromEnv();
  }

  private async secret(): Promise<NfvoSecret> {
    const { settings, secrets } = this.options;
    const mayHaveCertificate = settings.endpoint.startsWith('https:');
    if (!settings.clientId && !mayHaveCertificate) return {};
    try {
      return (await secrets.read(settings.secretId, { maxAgeMs: SECRET_MAX_AGE_MS })) as NfvoSecret;
    } catch (error) {
      // Without OAuth the secret is optional: no secret, no client certificate.
      if (!settings.clientId && error instanceof Error && error.name === 'ResourceNotFoundException') return {};
      throw error;
    }
  }

  private auth(secret: NfvoSecret) {
    const { tokenUrl, clientId } = this.options.settings;
    if (!tokenUrl || !clientId) return undefined;
    if (!secret.clientSecret) throw new Error(`the NFVO's client secret is not in ${this.options.settings.secretId} (npm run nfvo-secret -- set)`);
    return { authType: 'OAUTH2_CLIENT_CREDENTIALS' as const, tokenEndpoint: tokenUrl, clientId, clientPassword: secret.clientSecret };
  }

  private tlsOf(secret: NfvoSecret): { cert?: string; key?: string; ca?: string } {
    return {
      ...(secret.certificate && secret.privateKey ? { cert: secret.certificate, key: secret.privateKey } : {}),
      ...(secret.caCertificate ? { ca: secret.caCertificate } : {}),
    };
  }

  /** One request; credentials go only to the NFVO's own origin. A 401 drops the cached token and tries once more. */
  private async send(url: string, call: NfvoCall): Promise<EgressResponse> {
    const own = new URL(url).origin === this.origin;
    const secret = own ? await this.secret() : {};
    const auth = own ? this.auth(secret) : undefined;
    const now = this.options.now ?? Date.now;
    const request = async () =>
      egressRequest(
        url,
        {
          method: call.method,
          headers: {
            Accept: call.accept ?? 'application/json',
            Version: call.version,
            ...(call.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
            ...(auth ? { Authorization: `Bearer ${await accessToken(auth, this.policyFor(auth.tokenEndpoint), now())}` } : {}),
          },
          body: call.body !== undefined ? JSON.stringify(call.body) : undefined,
          timeoutMs: NFVO_CALL_TIMEOUT_MS,
          ...(call.stream ? { stream: true } : {}),
          ...(secret.certificate || secret.caCertificate ? { tls: this.tlsOf(secret) } : {}),
        },
        this.policyFor(url),
      );
    const response = await request();
    if (response.status !== 401 || !auth) return response;
    forgetAccessToken(auth);
    return request();
  }

  /**
   * Calls the NFVO: up to NFVO_MAX_ATTEMPTS times while it answers 5xx or 429 or cannot be
   * reached, waiting as its Retry-After says (else 1 s, then 2 s), at most NFVO_MAX_RETRY_WAIT_MS
   * in all; an answer asking for a longer wait is the answer. A refused address is not retried.
   */
  async call(target: string, call: NfvoCall): Promise<EgressResponse> {
    const url = this.url(target);
    const sleep = this.options.sleep ?? realSleep;
    const now = this.options.now ?? Date.now;
    let waited = 0;
    for (let attempt = 1; ; attempt++) {
      let response: EgressResponse | undefined;
      let failure: unknown;
      try {
        response = await this.send(url, call);
      } catch (error) {
        if (error instanceof EgressDeniedError || attempt >= NFVO_MAX_ATTEMPTS) throw error;
        failure = error;
      }
      if (response && response.status !== 429 && response.status < 500) return response;
      if (response && attempt >= NFVO_MAX_ATTEMPTS) return response;
      const wait = retryAfterMs(response?.headers['retry-after'], now()) ?? FIRST_RETRY_MS * 2 ** (attempt - 1);
      if (waited + wait > NFVO_MAX_RETRY_WAIT_MS) {
        if (response) return response;
        throw failure;
      }
      await sleep(wait);
      waited += wait;
    }
  }
}

/** The client of the configured NFVO, or undefined without one. */
export function nfvoClient(secrets: Pick<SecretStore, 'read'>): NfvoClient | undefined {
  const settings = nfvoSettings();
  return settings ? new NfvoClient({ secrets, settings }) : undefined;
}
