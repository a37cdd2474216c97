// The product's AWS SDK clients (lib/aws-client.ts): their resolved configuration is in V8's fast
// mode, which only V8's natives syntax can tell, so a child process with --allow-natives-syntax looks.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { awsClient } from '#lib/aws-client.ts';

const probe = `
const { awsClient } = await import('#lib/aws-client.ts');
const config = { region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } };
const kinds = {
  dynamodb: (await import('@aws-sdk/client-dynamodb')).DynamoDBClient,
  sqs: (await import('@aws-sdk/client-sqs')).SQSClient,
  s3: (await import('@aws-sdk/client-s3')).S3Client,
  secretsmanager: (await import('@aws-sdk/client-secrets-manager')).SecretsManagerClient,
  sfn: (await import('@aws-sdk/client-sfn')).SFNClient,
  lambda: (await import('@aws-sdk/client-lambda')).LambdaClient,
};
const out = {};
for (const [name, Client] of Object.entries(kinds)) {
  out[name] = { built: %HasFastProperties(new Client(config).config), awsClient: %HasFastProperties(awsClient(new Client(config)).config) };
}
console.log(JSON.stringify(out));
`;

describe('awsClient', () => {
  it("puts every kind of client's resolved configuration in fast mode, which the SDK leaves in dictionary mode", () => {
    const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', probe], { encoding: 'utf8' });
    const modes = JSON.parse(out) as Record<string, { built: boolean; awsClient: boolean }>;
    assert.deepEqual(Object.keys(modes), ['dynamodb', 'sqs', 's3', 'secretsmanager', 'sfn', 'lambda']);
    for (const [name, mode] of Object.entries(modes)) assert.equal(mode.awsClient, true, `${name}: ${JSON.stringify(mode)}`);
    // What it is for: as the SDK builds them, these configurations are in dictionary mode.
    assert.equal(modes.dynamodb?.built, false);
  });

  it('changes no setting of the configuration, and returns the client itself', async () => {
    const raw = new DynamoDBClient({ region: 'eu-west-3', maxAttempts: 7, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    const before = Object.entries(raw.config);
    const client = awsClient(raw);
    assert.equal(client, raw);
    assert.deepEqual(Object.entries(client.config), before);
    assert.equal(await client.config.region(), 'eu-west-3');
    assert.equal(await client.config.maxAttempts(), 7);
  });
});
