// `npm run nfvo-secret -- set [--stage <stage>] [--aws]`: stores the credentials the VNFM calls its
// NFVO with, read from standard input, in Secrets Manager as vnfm/<stage>/nfvo/credentials (stage
// default dev): the OAuth 2.0 client secret (NfvoTokenUrl, NfvoClientId) as plain text, or a JSON
// object {"clientSecret", "certificate", "privateKey", "caCertificate"} (PEM: a client certificate
// for an NFVO asking for mutual TLS, the CA of an NFVO's server certificate from a private CA), and
// "callbackClientId", "callbackClientSecret": the VNFM's own OAuth 2.0 client the NFVO calls back with.
// With --aws it writes to AWS (the standard credential chain and region); without, to the running
// local VNFM's Secrets Manager stand-in (VNFM_DATA_DIR, default ./.vnfm). A running VNFM reads the
// new value within 5 minutes.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SecretsManagerStore } from '#lib/secrets/vim-access.ts';
import { saveNfvoCredentials, type NfvoSecret } from '#lib/nfvo/client.ts';
import { readLocalAwsCredentials } from '#local/sigv4.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { stage: { type: 'string', default: 'dev' }, aws: { type: 'boolean', default: false } },
});

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

function credentialsOf(text: string): NfvoSecret {
  if (!text.startsWith('{')) return { clientSecret: text };
  const value = JSON.parse(text) as Record<string, unknown>;
  const known = ['clientSecret', 'certificate', 'privateKey', 'caCertificate', 'callbackClientId', 'callbackClientSecret'];
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length) throw new Error(`unknown field(s) ${unknown.join(', ')}; expected ${known.join(', ')}`);
  if (Object.values(value).some((v) => typeof v !== 'string' || v === '')) throw new Error('every field must be a non-empty string');
  if (Boolean(value.certificate) !== Boolean(value.privateKey)) throw new Error('a client certificate needs its privateKey, and a privateKey its certificate');
  if (Boolean(value.callbackClientId) !== Boolean(value.callbackClientSecret)) throw new Error('callbackClientId and callbackClientSecret go together');
  return value as NfvoSecret;
}

if (positionals[0] !== 'set') {
  process.stderr.write(
    'usage: npm run nfvo-secret -- set [--stage <stage>] [--aws] < secret\n' +
      '       standard input: the OAuth 2.0 client secret, or {"clientSecret": ..., "certificate": ..., "privateKey": ..., "caCertificate": ...}\n',
  );
  process.exitCode = 2;
} else {
  const text = await readStdin();
  if (!text) throw new Error('nothing on standard input');
  const credentials = credentialsOf(text);
  if (!values.aws) {
    // The running local VNFM's stand-in, with the key pair it made at its start.
    const dataDir = resolve(process.env.VNFM_DATA_DIR ?? '.vnfm');
    const endpoints = JSON.parse(readFileSync(join(dataDir, 'endpoints.json'), 'utf8')) as { secretsmanager: string; region: string };
    const key = readLocalAwsCredentials(dataDir);
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoints.secretsmanager,
      AWS_REGION: endpoints.region,
      AWS_ACCESS_KEY_ID: key.accessKeyId,
      AWS_SECRET_ACCESS_KEY: key.secretAccessKey,
    });
    delete process.env.AWS_SESSION_TOKEN;
    delete process.env.AWS_PROFILE;
  }
  const id = await saveNfvoCredentials(new SecretsManagerStore(`vnfm/${values.stage}/`), credentials);
  process.stdout.write(`Stored the NFVO credentials (${Object.keys(credentials).join(', ')}) in ${id}\n`);
}
