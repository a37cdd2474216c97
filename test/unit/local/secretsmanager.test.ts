// Tests for the local Secrets Manager stand-in, driven through the real @aws-sdk/client-secrets-manager.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateSecretCommand,
  DeleteSecretCommand,
  DescribeSecretCommand,
  GetSecretValueCommand,
  InvalidParameterException,
  InvalidRequestException,
  ListSecretsCommand,
  ListSecretVersionIdsCommand,
  PutSecretValueCommand,
  ResourceExistsException,
  ResourceNotFoundException,
  RestoreSecretCommand,
  SecretsManagerClient,
  TagResourceCommand,
  UntagResourceCommand,
  UpdateSecretCommand,
} from '@aws-sdk/client-secrets-manager';
import { signedHeaders } from '#local/sigv4.ts';
import { startLocalSecretsManager } from '#local/secretsmanager.ts';

/** The stand-in serves only requests signed with these. */
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

interface Harness {
  dataDir: string;
  endpoint: string;
  client: SecretsManagerClient;
  restart(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

async function harness(): Promise<Harness> {
  const dataDir = join(await mkdtemp(join(tmpdir(), 'local-sm-')), 'secrets');
  let server = await startLocalSecretsManager({ dataDir, credentials });
  const makeClient = () => new SecretsManagerClient({ region: 'us-east-1', endpoint: server.endpoint, credentials });
  const h: Harness = {
    dataDir,
    endpoint: server.endpoint,
    client: makeClient(),
    async restart() {
      h.client.destroy();
      await server.close();
      server = await startLocalSecretsManager({ dataDir, credentials });
      h.endpoint = server.endpoint;
      h.client = makeClient();
    },
    async [Symbol.asyncDispose]() {
      h.client.destroy();
      await server.close();
      await rm(join(dataDir, '..'), { recursive: true, force: true });
    },
  };
  return h;
}

test('create, get by name and by ARN, ARN shape, binary secrets, unknown secrets', async () => {
  await using h = await harness();
  const created = await h.client.send(
    new CreateSecretCommand({
      Name: 'vnfm/vim/default',
      SecretString: '{"password":"hunter2"}',
      Description: 'VIM credentials',
      KmsKeyId: 'alias/ignored',
      Tags: [{ Key: 'app', Value: 'vnfm' }],
    }),
  );
  assert.match(created.ARN ?? '', /^arn:aws:secretsmanager:us-east-1:000000000000:secret:vnfm\/vim\/default-[A-Za-z0-9]{6}$/);
  assert.ok(created.VersionId);

  const byName = await h.client.send(new GetSecretValueCommand({ SecretId: 'vnfm/vim/default' }));
  assert.equal(byName.SecretString, '{"password":"hunter2"}');
  assert.deepEqual(byName.VersionStages, ['AWSCURRENT']);
  assert.equal(byName.VersionId, created.VersionId);
  assert.ok(byName.CreatedDate instanceof Date);
  const byArn = await h.client.send(new GetSecretValueCommand({ SecretId: created.ARN }));
  assert.equal(byArn.Name, 'vnfm/vim/default');
  const byPartialArn = await h.client.send(new GetSecretValueCommand({ SecretId: created.ARN?.slice(0, -7) }));
  assert.equal(byPartialArn.ARN, created.ARN);

  const bytes = new Uint8Array([0, 1, 2, 250, 255]);
  await h.client.send(new CreateSecretCommand({ Name: 'binary', SecretBinary: bytes }));
  const binary = await h.client.send(new GetSecretValueCommand({ SecretId: 'binary' }));
  assert.deepEqual(Buffer.from(binary.SecretBinary ?? []), Buffer.from(bytes));
  assert.equal(binary.SecretString, undefined);

  await assert.rejects(h.client.send(new CreateSecretCommand({ Name: 'vnfm/vim/default', SecretString: 'x' })), ResourceExistsException);
  await assert.rejects(h.client.send(new GetSecretValueCommand({ SecretId: 'nope' })), ResourceNotFoundException);
  await assert.rejects(h.client.send(new GetSecretValueCommand({ SecretId: `${created.ARN?.slice(0, -6)}XXXXXX` })), ResourceNotFoundException);
  await assert.rejects(h.client.send(new CreateSecretCommand({ Name: 'bad name!', SecretString: 'x' })), InvalidParameterException);
  await assert.rejects(h.client.send(new CreateSecretCommand({ Name: 'both', SecretString: 'x', SecretBinary: bytes })), InvalidParameterException);

  const empty = await h.client.send(new CreateSecretCommand({ Name: 'empty' }));
  assert.equal(empty.VersionId, undefined);
  await assert.rejects(h.client.send(new GetSecretValueCommand({ SecretId: 'empty' })), ResourceNotFoundException);
});

test('PutSecretValue and UpdateSecret rotate AWSCURRENT/AWSPREVIOUS; versions and stages are addressable', async () => {
  await using h = await harness();
  const v1 = await h.client.send(new CreateSecretCommand({ Name: 'db', SecretString: 'one' }));
  const v2 = await h.client.send(new PutSecretValueCommand({ SecretId: 'db', SecretString: 'two' }));
  assert.deepEqual(v2.VersionStages, ['AWSCURRENT']);
  assert.equal((await h.client.send(new GetSecretValueCommand({ SecretId: 'db' }))).SecretString, 'two');
  assert.equal((await h.client.send(new GetSecretValueCommand({ SecretId: 'db', VersionStage: 'AWSPREVIOUS' }))).SecretString, 'one');
  assert.equal((await h.client.send(new GetSecretValueCommand({ SecretId: 'db', VersionId: v1.VersionId }))).SecretString, 'one');
  await assert.rejects(
    h.client.send(new GetSecretValueCommand({ SecretId: 'db', VersionId: v1.VersionId, VersionStage: 'AWSCURRENT' })),
    ResourceNotFoundException,
  );

  const v3 = await h.client.send(new UpdateSecretCommand({ SecretId: 'db', SecretString: 'three', Description: 'rotated' }));
  const described = await h.client.send(new DescribeSecretCommand({ SecretId: 'db' }));
  assert.equal(described.Description, 'rotated');
  assert.deepEqual(described.VersionIdsToStages, {
    [v2.VersionId ?? '']: ['AWSPREVIOUS'],
    [v3.VersionId ?? '']: ['AWSCURRENT'],
  });
  const all = await h.client.send(new ListSecretVersionIdsCommand({ SecretId: 'db', IncludeDeprecated: true }));
  assert.equal(all.Versions?.length, 3);

  // Same token and value: idempotent. Same token, different value: rejected.
  const token = 'a'.repeat(32);
  const first = await h.client.send(new PutSecretValueCommand({ SecretId: 'db', SecretString: 'four', ClientRequestToken: token }));
  const retry = await h.client.send(new PutSecretValueCommand({ SecretId: 'db', SecretString: 'four', ClientRequestToken: token }));
  assert.equal(retry.VersionId, first.VersionId);
  await assert.rejects(h.client.send(new PutSecretValueCommand({ SecretId: 'db', SecretString: 'five', ClientRequestToken: token })), ResourceExistsException);
  const previous = await h.client.send(new GetSecretValueCommand({ SecretId: 'db', VersionStage: 'AWSPREVIOUS' }));
  assert.equal(previous.SecretString, 'three', 'an idempotent retry does not rotate again');
});

test('DeleteSecret with a recovery window blocks reads until RestoreSecret; forced deletion removes the secret', async () => {
  await using h = await harness();
  await h.client.send(new CreateSecretCommand({ Name: 'temp', SecretString: 's3cret' }));
  const deleted = await h.client.send(new DeleteSecretCommand({ SecretId: 'temp', RecoveryWindowInDays: 7 }));
  assert.ok(deleted.DeletionDate instanceof Date);
  assert.ok(deleted.DeletionDate.getTime() > Date.now() + 6 * 86400_000);
  await assert.rejects(h.client.send(new GetSecretValueCommand({ SecretId: 'temp' })), InvalidRequestException);
  await assert.rejects(h.client.send(new PutSecretValueCommand({ SecretId: 'temp', SecretString: 'x' })), InvalidRequestException);
  await assert.rejects(h.client.send(new CreateSecretCommand({ Name: 'temp', SecretString: 'x' })), InvalidRequestException);
  await assert.rejects(h.client.send(new DeleteSecretCommand({ SecretId: 'temp' })), InvalidRequestException);
  const described = await h.client.send(new DescribeSecretCommand({ SecretId: 'temp' }));
  assert.ok(described.DeletedDate instanceof Date);
  assert.equal((await h.client.send(new ListSecretsCommand({}))).SecretList?.length, 0);
  assert.equal((await h.client.send(new ListSecretsCommand({ IncludePlannedDeletion: true }))).SecretList?.length, 1);

  await h.client.send(new RestoreSecretCommand({ SecretId: 'temp' }));
  assert.equal((await h.client.send(new GetSecretValueCommand({ SecretId: 'temp' }))).SecretString, 's3cret');

  await assert.rejects(
    h.client.send(new DeleteSecretCommand({ SecretId: 'temp', ForceDeleteWithoutRecovery: true, RecoveryWindowInDays: 7 })),
    InvalidParameterException,
  );
  await assert.rejects(h.client.send(new DeleteSecretCommand({ SecretId: 'temp', RecoveryWindowInDays: 3 })), InvalidParameterException);
  await h.client.send(new DeleteSecretCommand({ SecretId: 'temp', ForceDeleteWithoutRecovery: true }));
  await assert.rejects(h.client.send(new DescribeSecretCommand({ SecretId: 'temp' })), ResourceNotFoundException);
  await h.client.send(new CreateSecretCommand({ Name: 'temp', SecretString: 'again' }));
});

test('ListSecrets filters by name prefix and tags, and pages', async () => {
  await using h = await harness();
  for (const name of ['app/a', 'app/b', 'app/c', 'other/d']) {
    await h.client.send(new CreateSecretCommand({ Name: name, SecretString: name, Tags: [{ Key: 'team', Value: name.startsWith('app') ? 'blue' : 'red' }] }));
  }
  const names: string[] = [];
  let NextToken: string | undefined;
  do {
    const page = await h.client.send(new ListSecretsCommand({ Filters: [{ Key: 'name', Values: ['app/'] }], MaxResults: 2, NextToken }));
    assert.ok((page.SecretList ?? []).length <= 2);
    names.push(...(page.SecretList ?? []).map((s) => s.Name ?? ''));
    NextToken = page.NextToken;
  } while (NextToken);
  assert.deepEqual(names, ['app/a', 'app/b', 'app/c']);

  const red = await h.client.send(new ListSecretsCommand({ Filters: [{ Key: 'tag-value', Values: ['red'] }] }));
  assert.deepEqual(
    red.SecretList?.map((s) => s.Name),
    ['other/d'],
  );
  const notApp = await h.client.send(new ListSecretsCommand({ Filters: [{ Key: 'name', Values: ['!app'] }] }));
  assert.deepEqual(
    notApp.SecretList?.map((s) => s.Name),
    ['other/d'],
  );
  const caseSensitive = await h.client.send(new ListSecretsCommand({ Filters: [{ Key: 'name', Values: ['APP'] }] }));
  assert.deepEqual(caseSensitive.SecretList, []);

  await h.client.send(
    new TagResourceCommand({
      SecretId: 'app/a',
      Tags: [
        { Key: 'env', Value: 'dev' },
        { Key: 'team', Value: 'green' },
      ],
    }),
  );
  await h.client.send(new UntagResourceCommand({ SecretId: 'app/a', TagKeys: ['env'] }));
  const tagged = await h.client.send(new DescribeSecretCommand({ SecretId: 'app/a' }));
  assert.deepEqual(tagged.Tags, [{ Key: 'team', Value: 'green' }]);
});

test('persistence: one encrypted 0600 data file plus a 0600 key file, atomic writes, survives a restart', async () => {
  await using h = await harness();
  const plaintext = 'Pl41nT3xt-NEVER-ON-DISK';
  const { ARN } = await h.client.send(new CreateSecretCommand({ Name: 'persisted', SecretString: plaintext, Description: 'kept' }));
  await h.client.send(new PutSecretValueCommand({ SecretId: 'persisted', SecretString: `${plaintext}-2` }));

  const files = (await readdir(h.dataDir)).sort();
  assert.deepEqual(files, ['secrets.enc', 'secrets.key'], 'no temp files are left behind');
  for (const file of files) {
    const mode = (await stat(join(h.dataDir, file))).mode & 0o777;
    assert.equal(mode, 0o600, `${file} has mode ${mode.toString(8)}`);
  }
  assert.equal((await readFile(join(h.dataDir, 'secrets.key'))).length, 32);
  const data = await readFile(join(h.dataDir, 'secrets.enc'));
  for (const needle of [plaintext, Buffer.from(plaintext).toString('base64'), 'persisted', 'kept']) {
    assert.equal(data.includes(needle), false, `data file must not contain ${needle}`);
  }

  // A crash mid-write leaves at most a torn temp file beside an intact data file; it is discarded.
  await writeFile(join(h.dataDir, 'secrets.enc.999.deadbeef.tmp'), data.subarray(0, 10));
  await h.restart();
  assert.deepEqual((await readdir(h.dataDir)).sort(), ['secrets.enc', 'secrets.key']);
  const value = await h.client.send(new GetSecretValueCommand({ SecretId: 'persisted' }));
  assert.equal(value.SecretString, `${plaintext}-2`);
  assert.equal(value.ARN, ARN);
  const previous = await h.client.send(new GetSecretValueCommand({ SecretId: ARN, VersionStage: 'AWSPREVIOUS' }));
  assert.equal(previous.SecretString, plaintext);
  const described = await h.client.send(new DescribeSecretCommand({ SecretId: 'persisted' }));
  assert.equal(described.Description, 'kept');
});

test('a data file whose key does not match is refused rather than silently replaced', async () => {
  await using h = await harness();
  await h.client.send(new CreateSecretCommand({ Name: 'x', SecretString: 'y' }));
  const other = join(h.dataDir, '..', 'other');
  const second = await startLocalSecretsManager({ dataDir: other, credentials });
  await second.close();
  await copyFile(join(other, 'secrets.key'), join(h.dataDir, 'secrets.key'));
  await assert.rejects(h.restart(), /cannot be decrypted/);
});

test('wire protocol: AWS JSON 1.1 errors for unknown operations', async () => {
  await using h = await harness();
  const res = await fetch(h.endpoint, {
    method: 'POST',
    headers: signedHeaders({
      credentials,
      service: 'secretsmanager',
      method: 'POST',
      url: h.endpoint,
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'secretsmanager.Frobnicate' },
      body: '{}',
    }),
    body: '{}',
  });
  assert.equal(res.status, 400);
  assert.equal(res.headers.get('content-type'), 'application/x-amz-json-1.1');
  assert.equal(((await res.json()) as { __type: string }).__type, 'UnknownOperationException');
});
