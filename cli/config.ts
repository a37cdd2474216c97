// Where the CLI finds the VNFM and its credentials: a saved profile (`vnfm login`), or the
// endpoint from --endpoint / VNFM_ENDPOINT and the client the local runtime wrote to
// $VNFM_DATA_DIR/credentials.json. Profiles hold a client secret, so their file is the user's alone.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { CliError, type ClientCredentials } from './client.ts';

export const DEFAULT_ENDPOINT = 'http://127.0.0.1:9890';
export const DEFAULT_PROFILE = 'default';

export interface Profile {
  endpoint: string;
  clientId: string;
  clientSecret: string;
  tokenUrl: string;
}

export type Profiles = Record<string, Profile>;

export interface Connection {
  endpoint: string;
  credentials?: ClientCredentials;
  /** Where the credentials came from, for messages. */
  source: string;
}

export interface ConnectionOptions {
  endpoint?: string;
  profile?: string;
}

type Env = Record<string, string | undefined>;

/** `$XDG_CONFIG_HOME/vnfm/profiles.json`, else `~/.config/vnfm/profiles.json`. */
export function profilesPath(env: Env = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'vnfm', 'profiles.json');
}

export function readProfiles(env: Env = process.env): Profiles {
  const path = profilesPath(env);
  if (!existsSync(path)) return {};
  try {
    const profiles = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    if (typeof profiles !== 'object' || profiles === null || Array.isArray(profiles)) throw new Error('not an object');
    return profiles as Profiles;
  } catch (error) {
    throw new CliError(`${path} is not a profiles file (${(error as Error).message}); run "vnfm login" again or remove it`);
  }
}

/** Saves a profile; the file is written 0600 under a 0700 folder, then moved into place. */
export function saveProfile(name: string, profile: Profile, env: Env = process.env): string {
  const path = profilesPath(env);
  const profiles = { ...readProfiles(env), [name]: profile };
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, `${JSON.stringify(profiles, null, 2)}\n`, { mode: 0o600 });
  chmodSync(partial, 0o600);
  renameSync(partial, path);
  return path;
}

function readCredentialsFile(path: string): ClientCredentials {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<ClientCredentials>;
    if (typeof parsed.clientId !== 'string' || typeof parsed.clientSecret !== 'string') throw new Error('no clientId and clientSecret');
    return { clientId: parsed.clientId, clientSecret: parsed.clientSecret, tokenUrl: parsed.tokenUrl ?? '' };
  } catch (error) {
    throw new CliError(`${path} is not a credentials file (${(error as Error).message})`);
  }
}

/**
 * The endpoint and credentials a command uses. A profile named by --profile or VNFM_PROFILE wins;
 * otherwise $VNFM_DATA_DIR/credentials.json (default ./.vnfm) if there is one, else the profile
 * "default" if saved, else no credentials (a VNFM run with VNFM_AUTH=off needs none).
 * --endpoint, then VNFM_ENDPOINT, override the endpoint either way.
 */
export function resolveConnection(options: ConnectionOptions, env: Env = process.env): Connection {
  const explicitEndpoint = options.endpoint || env.VNFM_ENDPOINT || undefined;
  const profileName = options.profile || env.VNFM_PROFILE;
  if (profileName) {
    const profile = readProfiles(env)[profileName];
    if (!profile) throw new CliError(`No profile "${profileName}" in ${profilesPath(env)}; create it with "vnfm login --profile ${profileName} ..."`);
    return fromProfile(profile, explicitEndpoint, `profile ${profileName}`);
  }
  const credentialsFile = join(resolve(env.VNFM_DATA_DIR || '.vnfm'), 'credentials.json');
  const endpoint = (explicitEndpoint ?? DEFAULT_ENDPOINT).replace(/\/+$/, '');
  if (existsSync(credentialsFile)) {
    const credentials = readCredentialsFile(credentialsFile);
    return { endpoint, credentials: { ...credentials, tokenUrl: credentials.tokenUrl || `${endpoint}/oauth2/token` }, source: credentialsFile };
  }
  const saved = readProfiles(env)[DEFAULT_PROFILE];
  if (saved) return fromProfile(saved, explicitEndpoint, `profile ${DEFAULT_PROFILE}`);
  return { endpoint, source: 'no credentials' };
}

function fromProfile(profile: Profile, endpoint: string | undefined, source: string): Connection {
  const chosen = (endpoint ?? profile.endpoint).replace(/\/+$/, '');
  return {
    endpoint: chosen,
    credentials: { clientId: profile.clientId, clientSecret: profile.clientSecret, tokenUrl: profile.tokenUrl || `${chosen}/oauth2/token` },
    source,
  };
}
