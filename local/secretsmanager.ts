// Local AWS Secrets Manager stand-in: an HTTP server speaking the AWS JSON 1.1 wire protocol that
// @aws-sdk/client-secrets-manager uses, keeping every secret in one AES-256-GCM encrypted file.
import type http from 'node:http';
import { createCipheriv, createDecipheriv, randomBytes, randomInt, randomUUID } from 'node:crypto';
import { chmod, mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { AwsError, decodeToken, encodeToken, parseInput, startAwsJsonServer, type AwsJsonOperation } from './aws-json.ts';
import type { AwsCredentials } from './sigv4.ts';

export interface LocalSecretsManager {
  endpoint: string;
  close(): Promise<void>;
}

export interface LocalSecretsManagerOptions {
  /** Directory holding the encrypted data file and its key file (created with mode 0700 if missing). */
  dataDir: string;
  /** The only credentials whose SigV4 signature it accepts. */
  credentials: AwsCredentials;
  host?: string;
  port?: number;
}

const ACCOUNT = '000000000000';
const DEFAULT_REGION = 'us-east-1';
const DATA_FILE = 'secrets.enc';
const KEY_FILE = 'secrets.key';
const FORMAT = 'serverless-vnfm-local-secretsmanager';
const AAD = Buffer.from(`${FORMAT}/v1`);
const MAX_VERSIONS = 100;
const NAME_PATTERN = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const ARN_SUFFIX_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

// ---------------------------------------------------------------------------------------------
// Stored state (only ever written to disk encrypted).

const versionSchema = z.object({
  id: z.string(),
  secretString: z.string().optional(),
  secretBinary: z.string().optional(),
  stages: z.array(z.string()),
  created: z.number(),
});
const tagSchema = z.object({ Key: z.string(), Value: z.string() });
const secretSchema = z.object({
  seq: z.number(),
  arn: z.string(),
  name: z.string(),
  description: z.string().optional(),
  kmsKeyId: z.string().optional(),
  tags: z.array(tagSchema),
  created: z.number(),
  lastChanged: z.number(),
  deletedAt: z.number().optional(),
  deletionDate: z.number().optional(),
  versions: z.array(versionSchema),
});
const storeSchema = z.object({ seq: z.number(), secrets: z.array(secretSchema) });
const envelopeSchema = z.object({
  format: z.literal(FORMAT),
  version: z.literal(1),
  alg: z.literal('AES-256-GCM'),
  iv: z.string(),
  tag: z.string(),
  ciphertext: z.string(),
});

type Store = z.infer<typeof storeSchema>;
type Secret = z.infer<typeof secretSchema>;
type Version = z.infer<typeof versionSchema>;
type Tag = z.infer<typeof tagSchema>;

async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Directory fsync is not supported everywhere; the rename itself is still atomic.
  }
}

/** Writes via a 0600 temp file, fsync and rename, so readers only ever see a whole file. */
async function writeFileAtomic(path: string, dir: string, data: Buffer | string): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(tmp, 'wx', 0o600);
  try {
    await handle.chmod(0o600);
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await syncDir(dir);
}

async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function encrypt(key: Buffer, store: Store): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(AAD);
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(store), 'utf8'), cipher.final()]);
  return JSON.stringify({
    format: FORMAT,
    version: 1,
    alg: 'AES-256-GCM',
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    ciphertext: ciphertext.toString('base64'),
  });
}

function decrypt(key: Buffer, file: Buffer, path: string): Store {
  try {
    const envelope = envelopeSchema.parse(JSON.parse(file.toString('utf8')));
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(envelope.iv, 'base64'));
    decipher.setAAD(AAD);
    decipher.setAuthTag(Buffer.from(envelope.tag, 'base64'));
    const plaintext = Buffer.concat([decipher.update(Buffer.from(envelope.ciphertext, 'base64')), decipher.final()]);
    return storeSchema.parse(JSON.parse(plaintext.toString('utf8')));
  } catch {
    // Deliberately no detail: nothing about the contents may leak into logs.
    throw new Error(`${path} cannot be decrypted with the key in the same directory (corrupt file or wrong key)`);
  }
}

async function loadKey(dataDir: string, dataExists: boolean): Promise<Buffer> {
  const keyPath = join(dataDir, KEY_FILE);
  const existing = await readIfExists(keyPath);
  if (existing) {
    if (existing.length !== 32) throw new Error(`${keyPath} must hold exactly 32 bytes`);
    await chmod(keyPath, 0o600);
    return existing;
  }
  if (dataExists) throw new Error(`${join(dataDir, DATA_FILE)} exists but its key file ${keyPath} is missing`);
  const key = randomBytes(32);
  await writeFileAtomic(keyPath, dataDir, key);
  return key;
}

// ---------------------------------------------------------------------------------------------
// Request schemas (AWS JSON 1.1 bodies as @aws-sdk/client-secrets-manager sends them).

const secretId = z.string().min(1).max(2048);
const token = z.string().min(32).max(64);
const secretString = z.string().max(65536);
const secretBinary = z.string().regex(BASE64, 'must be base64').max(87384);
const schemas = {
  CreateSecret: z.object({
    Name: z.string(),
    ClientRequestToken: token.optional(),
    Description: z.string().max(2048).optional(),
    KmsKeyId: z.string().max(2048).optional(),
    SecretString: secretString.optional(),
    SecretBinary: secretBinary.optional(),
    Tags: z
      .array(z.object({ Key: z.string().min(1).max(128), Value: z.string().max(256) }))
      .max(50)
      .optional(),
  }),
  GetSecretValue: z.object({
    SecretId: secretId,
    VersionId: z.string().optional(),
    VersionStage: z.string().min(1).max(256).optional(),
  }),
  PutSecretValue: z.object({
    SecretId: secretId,
    ClientRequestToken: token.optional(),
    SecretString: secretString.optional(),
    SecretBinary: secretBinary.optional(),
    VersionStages: z.array(z.string().min(1).max(256)).min(1).max(20).optional(),
  }),
  UpdateSecret: z.object({
    SecretId: secretId,
    ClientRequestToken: token.optional(),
    Description: z.string().max(2048).optional(),
    KmsKeyId: z.string().max(2048).optional(),
    SecretString: secretString.optional(),
    SecretBinary: secretBinary.optional(),
  }),
  DescribeSecret: z.object({ SecretId: secretId }),
  ListSecrets: z.object({
    IncludePlannedDeletion: z.boolean().optional(),
    MaxResults: z.number().int().min(1).max(100).optional(),
    NextToken: z.string().max(4096).optional(),
    Filters: z
      .array(
        z.object({
          Key: z.enum(['description', 'name', 'tag-key', 'tag-value', 'primary-region', 'owning-service', 'all']),
          Values: z.array(z.string().max(512)).min(1).max(10),
        }),
      )
      .max(10)
      .optional(),
    SortOrder: z.enum(['asc', 'desc']).optional(),
  }),
  DeleteSecret: z.object({
    SecretId: secretId,
    RecoveryWindowInDays: z.number().int().optional(),
    ForceDeleteWithoutRecovery: z.boolean().optional(),
  }),
  RestoreSecret: z.object({ SecretId: secretId }),
  TagResource: z.object({ SecretId: secretId, Tags: z.array(z.object({ Key: z.string().min(1).max(128), Value: z.string().max(256) })) }),
  UntagResource: z.object({ SecretId: secretId, TagKeys: z.array(z.string().min(1).max(128)) }),
  ListSecretVersionIds: z.object({
    SecretId: secretId,
    MaxResults: z.number().int().min(1).max(100).optional(),
    NextToken: z.string().max(4096).optional(),
    IncludeDeprecated: z.boolean().optional(),
  }),
};

function parse<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  return parseInput(schema, body, (field, problem) => new AwsError('InvalidParameterException', `Invalid value for ${field}: ${problem}`));
}

function now(): number {
  return Date.now() / 1000;
}

function arnSuffix(): string {
  let out = '';
  for (let i = 0; i < 6; i++) out += ARN_SUFFIX_CHARS[randomInt(ARN_SUFFIX_CHARS.length)];
  return out;
}

function regionOf(req: http.IncomingMessage): string {
  const auth = req.headers.authorization;
  const m = typeof auth === 'string' ? /Credential=[^/,\s]+\/\d{8}\/([a-z0-9-]+)\//.exec(auth) : null;
  return m?.[1] ?? DEFAULT_REGION;
}

function isLive(secret: Secret, at: number): boolean {
  return secret.deletionDate === undefined || secret.deletionDate > at;
}

function findSecret(store: Store, id: string): Secret {
  const at = now();
  const secret = store.secrets.find((s) => isLive(s, at) && (id.startsWith('arn:') ? s.arn === id || s.arn.slice(0, -7) === id : s.name === id));
  if (!secret) throw new AwsError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
  return secret;
}

function requireNotDeleted(secret: Secret): void {
  if (secret.deletedAt !== undefined) {
    throw new AwsError('InvalidRequestException', "You can't perform this operation on the secret because it was marked for deletion.");
  }
}

interface SecretValue {
  secretString?: string;
  secretBinary?: string;
}

function secretValueOf(req: { SecretString?: string | undefined; SecretBinary?: string | undefined }): SecretValue | undefined {
  if (req.SecretString !== undefined && req.SecretBinary !== undefined) {
    throw new AwsError('InvalidParameterException', "You can't specify both a binary secret value and a string secret value in the same secret.");
  }
  if (req.SecretString !== undefined) return { secretString: req.SecretString };
  if (req.SecretBinary !== undefined) return { secretBinary: req.SecretBinary };
  return undefined;
}

function valueFields(version: Version): { SecretString?: string; SecretBinary?: string } {
  if (version.secretString !== undefined) return { SecretString: version.secretString };
  if (version.secretBinary !== undefined) return { SecretBinary: version.secretBinary };
  return {};
}

/** Adds a version and moves staging labels the way Secrets Manager does (AWSCURRENT -> AWSPREVIOUS). */
function addVersion(secret: Secret, id: string, value: SecretValue, stages: string[]): Version {
  const existing = secret.versions.find((v) => v.id === id);
  if (existing) {
    if (existing.secretString === value.secretString && existing.secretBinary === value.secretBinary) return existing;
    throw new AwsError('ResourceExistsException', `A resource with the ID you requested already exists: version ${id} has different content.`);
  }
  const at = now();
  const previousCurrent = secret.versions.find((v) => v.stages.includes('AWSCURRENT'));
  const wanted = [...new Set(stages)];
  for (const v of secret.versions) v.stages = v.stages.filter((s) => !wanted.includes(s));
  if (wanted.includes('AWSCURRENT') && previousCurrent) {
    for (const v of secret.versions) v.stages = v.stages.filter((s) => s !== 'AWSPREVIOUS');
    previousCurrent.stages.push('AWSPREVIOUS');
  }
  const version: Version = { id, ...value, stages: wanted, created: at };
  secret.versions.push(version);
  // Versions without labels are deprecated; keep at most MAX_VERSIONS, dropping the oldest deprecated ones.
  while (secret.versions.length > MAX_VERSIONS) {
    const idx = secret.versions.findIndex((v) => v.stages.length === 0);
    if (idx < 0) break;
    secret.versions.splice(idx, 1);
  }
  secret.lastChanged = at;
  return version;
}

function versionsToStages(secret: Secret): Record<string, string[]> {
  return Object.fromEntries(secret.versions.filter((v) => v.stages.length > 0).map((v) => [v.id, v.stages]));
}

function words(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/([A-Za-z])([0-9])|([0-9])([A-Za-z])/g, '$1$3 $2$4')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

function matchesFilter(secret: Secret, key: string, value: string): boolean {
  switch (key) {
    case 'name':
      return secret.name.startsWith(value);
    case 'description': {
      const description = (secret.description ?? '').toLowerCase();
      const wanted = value.toLowerCase();
      return description.startsWith(wanted) || description.split(/\s+/).some((w) => w.startsWith(wanted));
    }
    case 'tag-key':
      return secret.tags.some((t) => t.Key.startsWith(value));
    case 'tag-value':
      return secret.tags.some((t) => t.Value.startsWith(value));
    case 'all': {
      const haystack = [secret.name, secret.description ?? '', ...secret.tags.flatMap((t) => [t.Key, t.Value])].flatMap(words);
      const needles = words(value);
      return needles.length > 0 && needles.every((n) => haystack.some((w) => w.startsWith(n)));
    }
    default:
      return false; // primary-region / owning-service: no local secret has one
  }
}

function invalidNextToken(): AwsError {
  return new AwsError('InvalidNextTokenException', 'The NextToken value is invalid.');
}

function mergeTags(current: Tag[], added: Tag[]): Tag[] {
  const byKey = new Map(current.map((t) => [t.Key, t.Value]));
  for (const t of added) byKey.set(t.Key, t.Value);
  return [...byKey].map(([Key, Value]) => ({ Key, Value }));
}

// ---------------------------------------------------------------------------------------------

export async function startLocalSecretsManager(opts: LocalSecretsManagerOptions): Promise<LocalSecretsManager> {
  const { dataDir } = opts;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // Temp files left by a crash mid-write are never the live copy; drop them.
  for (const entry of await readdir(dataDir)) {
    if ((entry.startsWith(`${DATA_FILE}.`) || entry.startsWith(`${KEY_FILE}.`)) && entry.endsWith('.tmp')) await rm(join(dataDir, entry), { force: true });
  }
  const dataPath = join(dataDir, DATA_FILE);
  const dataFile = await readIfExists(dataPath);
  const key = await loadKey(dataDir, dataFile !== undefined);
  let state: Store = dataFile ? decrypt(key, dataFile, dataPath) : { seq: 0, secrets: [] };
  const persist = (store: Store) => writeFileAtomic(dataPath, dataDir, encrypt(key, store));
  if (dataFile) await chmod(dataPath, 0o600);
  else await persist(state);

  // Mutations run one at a time on a copy that replaces the state only once it is on disk.
  let chain: Promise<unknown> = Promise.resolve();
  const mutate = <T>(change: (draft: Store) => T): Promise<T> => {
    const run = chain.then(async () => {
      const draft = structuredClone(state);
      const at = now();
      draft.secrets = draft.secrets.filter((s) => isLive(s, at));
      const result = change(draft);
      await persist(draft);
      state = draft;
      return result;
    });
    chain = run.catch(() => {});
    return run;
  };

  const operations: Record<string, AwsJsonOperation> = {
    CreateSecret: (body, req) => {
      const input = parse(schemas.CreateSecret, body);
      if (!NAME_PATTERN.test(input.Name)) {
        throw new AwsError(
          'InvalidParameterException',
          'Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@',
        );
      }
      const value = secretValueOf(input);
      return mutate((draft) => {
        const at = now();
        const existing = draft.secrets.find((s) => s.name === input.Name);
        if (existing) {
          if (existing.deletedAt !== undefined) {
            throw new AwsError('InvalidRequestException', "You can't create this secret because a secret with this name is already scheduled for deletion.");
          }
          // A retried request (same token, same value) is idempotent.
          const same = value && input.ClientRequestToken && existing.versions.find((v) => v.id === input.ClientRequestToken);
          if (same && same.secretString === value.secretString && same.secretBinary === value.secretBinary) {
            return { ARN: existing.arn, Name: existing.name, VersionId: same.id };
          }
          throw new AwsError('ResourceExistsException', `The operation failed because the secret ${input.Name} already exists.`);
        }
        const secret: Secret = {
          seq: ++draft.seq,
          arn: `arn:aws:secretsmanager:${regionOf(req)}:${ACCOUNT}:secret:${input.Name}-${arnSuffix()}`,
          name: input.Name,
          ...(input.Description !== undefined ? { description: input.Description } : {}),
          ...(input.KmsKeyId !== undefined ? { kmsKeyId: input.KmsKeyId } : {}),
          tags: mergeTags([], input.Tags ?? []),
          created: at,
          lastChanged: at,
          versions: [],
        };
        draft.secrets.push(secret);
        if (!value) return { ARN: secret.arn, Name: secret.name };
        const version = addVersion(secret, input.ClientRequestToken ?? randomUUID(), value, ['AWSCURRENT']);
        return { ARN: secret.arn, Name: secret.name, VersionId: version.id };
      });
    },

    GetSecretValue: (body) => {
      const input = parse(schemas.GetSecretValue, body);
      const secret = findSecret(state, input.SecretId);
      requireNotDeleted(secret);
      let version: Version | undefined;
      if (input.VersionId !== undefined) {
        version = secret.versions.find((v) => v.id === input.VersionId);
        if (!version || (input.VersionStage !== undefined && !version.stages.includes(input.VersionStage))) {
          throw new AwsError('ResourceNotFoundException', `Secrets Manager can't find the specified secret value for VersionId: ${input.VersionId}`);
        }
      } else {
        const stage = input.VersionStage ?? 'AWSCURRENT';
        version = secret.versions.find((v) => v.stages.includes(stage));
        if (!version) throw new AwsError('ResourceNotFoundException', `Secrets Manager can't find the specified secret value for staging label: ${stage}`);
      }
      return {
        ARN: secret.arn,
        Name: secret.name,
        VersionId: version.id,
        ...valueFields(version),
        VersionStages: version.stages,
        CreatedDate: version.created,
      };
    },

    PutSecretValue: (body) => {
      const input = parse(schemas.PutSecretValue, body);
      const value = secretValueOf(input);
      if (!value) throw new AwsError('InvalidParameterException', 'You must provide either SecretString or SecretBinary.');
      return mutate((draft) => {
        const secret = findSecret(draft, input.SecretId);
        requireNotDeleted(secret);
        const version = addVersion(secret, input.ClientRequestToken ?? randomUUID(), value, input.VersionStages ?? ['AWSCURRENT']);
        return { ARN: secret.arn, Name: secret.name, VersionId: version.id, VersionStages: version.stages };
      });
    },

    UpdateSecret: (body) => {
      const input = parse(schemas.UpdateSecret, body);
      const value = secretValueOf(input);
      return mutate((draft) => {
        const secret = findSecret(draft, input.SecretId);
        requireNotDeleted(secret);
        if (input.Description !== undefined) secret.description = input.Description;
        if (input.KmsKeyId !== undefined) secret.kmsKeyId = input.KmsKeyId;
        secret.lastChanged = now();
        if (!value) return { ARN: secret.arn, Name: secret.name };
        const version = addVersion(secret, input.ClientRequestToken ?? randomUUID(), value, ['AWSCURRENT']);
        return { ARN: secret.arn, Name: secret.name, VersionId: version.id };
      });
    },

    DescribeSecret: (body) => {
      const input = parse(schemas.DescribeSecret, body);
      const secret = findSecret(state, input.SecretId);
      return {
        ARN: secret.arn,
        Name: secret.name,
        ...(secret.description !== undefined ? { Description: secret.description } : {}),
        ...(secret.kmsKeyId !== undefined ? { KmsKeyId: secret.kmsKeyId } : {}),
        RotationEnabled: false,
        LastChangedDate: secret.lastChanged,
        ...(secret.deletedAt !== undefined ? { DeletedDate: secret.deletedAt } : {}),
        Tags: secret.tags,
        VersionIdsToStages: versionsToStages(secret),
        CreatedDate: secret.created,
      };
    },

    ListSecrets: (body) => {
      const input = parse(schemas.ListSecrets, body);
      const order = input.SortOrder ?? 'asc';
      const limit = input.MaxResults ?? 100;
      let cursor: number | undefined;
      if (input.NextToken !== undefined) {
        const decoded = decodeToken(input.NextToken);
        if (typeof decoded?.seq !== 'number' || decoded.order !== order) throw invalidNextToken();
        cursor = decoded.seq;
      }
      const at = now();
      const matching = state.secrets
        .filter((s) => isLive(s, at) && (input.IncludePlannedDeletion || s.deletedAt === undefined))
        .filter((s) =>
          (input.Filters ?? []).every((f) => {
            const positive = f.Values.filter((v) => !v.startsWith('!'));
            const negative = f.Values.filter((v) => v.startsWith('!')).map((v) => v.slice(1));
            return (positive.length === 0 || positive.some((v) => matchesFilter(s, f.Key, v))) && !negative.some((v) => matchesFilter(s, f.Key, v));
          }),
        )
        .filter((s) => cursor === undefined || (order === 'asc' ? s.seq > cursor : s.seq < cursor))
        .sort((a, b) => (order === 'asc' ? a.seq - b.seq : b.seq - a.seq));
      const page = matching.slice(0, limit);
      const last = page[page.length - 1];
      return {
        SecretList: page.map((s) => ({
          ARN: s.arn,
          Name: s.name,
          ...(s.description !== undefined ? { Description: s.description } : {}),
          ...(s.kmsKeyId !== undefined ? { KmsKeyId: s.kmsKeyId } : {}),
          RotationEnabled: false,
          LastChangedDate: s.lastChanged,
          ...(s.deletedAt !== undefined ? { DeletedDate: s.deletedAt } : {}),
          Tags: s.tags,
          SecretVersionsToStages: versionsToStages(s),
          CreatedDate: s.created,
        })),
        ...(matching.length > limit && last ? { NextToken: encodeToken({ seq: last.seq, order }) } : {}),
      };
    },

    DeleteSecret: (body) => {
      const input = parse(schemas.DeleteSecret, body);
      if (input.ForceDeleteWithoutRecovery && input.RecoveryWindowInDays !== undefined) {
        throw new AwsError('InvalidParameterException', "You can't use ForceDeleteWithoutRecovery in conjunction with RecoveryWindowInDays.");
      }
      const days = input.RecoveryWindowInDays ?? 30;
      if (days < 7 || days > 30) throw new AwsError('InvalidParameterException', 'The RecoveryWindowInDays value must be between 7 and 30 days (inclusive).');
      return mutate((draft) => {
        const secret = findSecret(draft, input.SecretId);
        const at = now();
        if (input.ForceDeleteWithoutRecovery) {
          draft.secrets = draft.secrets.filter((s) => s !== secret);
          return { ARN: secret.arn, Name: secret.name, DeletionDate: at };
        }
        if (secret.deletedAt !== undefined) {
          throw new AwsError('InvalidRequestException', "You can't perform this operation on the secret because it was already scheduled for deletion.");
        }
        secret.deletedAt = at;
        secret.deletionDate = at + days * 86400;
        return { ARN: secret.arn, Name: secret.name, DeletionDate: secret.deletionDate };
      });
    },

    RestoreSecret: (body) => {
      const input = parse(schemas.RestoreSecret, body);
      return mutate((draft) => {
        const secret = findSecret(draft, input.SecretId);
        delete secret.deletedAt;
        delete secret.deletionDate;
        secret.lastChanged = now();
        return { ARN: secret.arn, Name: secret.name };
      });
    },

    TagResource: (body) => {
      const input = parse(schemas.TagResource, body);
      return mutate((draft) => {
        const secret = findSecret(draft, input.SecretId);
        requireNotDeleted(secret);
        secret.tags = mergeTags(secret.tags, input.Tags);
        return {};
      });
    },

    UntagResource: (body) => {
      const input = parse(schemas.UntagResource, body);
      return mutate((draft) => {
        const secret = findSecret(draft, input.SecretId);
        requireNotDeleted(secret);
        secret.tags = secret.tags.filter((t) => !input.TagKeys.includes(t.Key));
        return {};
      });
    },

    ListSecretVersionIds: (body) => {
      const input = parse(schemas.ListSecretVersionIds, body);
      const secret = findSecret(state, input.SecretId);
      const limit = input.MaxResults ?? 100;
      let offset = 0;
      if (input.NextToken !== undefined) {
        const decoded = decodeToken(input.NextToken);
        if (typeof decoded?.offset !== 'number') throw invalidNextToken();
        offset = decoded.offset;
      }
      const all = secret.versions.filter((v) => input.IncludeDeprecated || v.stages.length > 0);
      return {
        ARN: secret.arn,
        Name: secret.name,
        Versions: all.slice(offset, offset + limit).map((v) => ({ VersionId: v.id, VersionStages: v.stages, CreatedDate: v.created })),
        ...(offset + limit < all.length ? { NextToken: encodeToken({ offset: offset + limit }) } : {}),
      };
    },
  };

  const api = await startAwsJsonServer({
    name: 'Secrets Manager',
    targetPrefix: 'secretsmanager',
    contentType: 'application/x-amz-json-1.1',
    operations,
    signedBy: { credentials: opts.credentials, service: 'secretsmanager' },
    maxBodyBytes: 1024 * 1024,
    validationErrorType: 'InvalidParameterException',
    internalError: { type: 'InternalServiceError', message: 'An error occurred on the server side.' },
    host: opts.host,
    port: opts.port,
  });

  let closing: Promise<void> | undefined;
  return {
    endpoint: api.endpoint,
    close() {
      closing ??= (async () => {
        await api.close();
        await chain; // let an in-flight write land before returning
      })();
      return closing;
    },
  };
}
