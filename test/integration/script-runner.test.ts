// The script runner as the product wires it: `npm start` serves the Lambda Invoke API (its endpoint in
// endpoints.json), the ScriptRunnerFunction of template.yaml answers through it with the real AWS SDK,
// and a vendor script run there sees neither the product's environment nor its data directory.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InvokeCommand, LambdaClient, ResourceNotFoundException } from '@aws-sdk/client-lambda';
import { invokeScriptRunner } from '#lib/scripts/client.ts';
import type { ScriptRequest, ScriptResult } from '#lib/scripts/contract.ts';
import { findPython } from '#lib/scripts/sandbox.ts';
import { newDataDir, startVnfm, type LocalVnfm } from '../support/runtime.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');

let vnfm: LocalVnfm;
let lambda: LambdaClient;
let endpoints: { api: string; lambda: string; secretsmanager: string; dynamodb: string; region: string };

before(async () => {
  // Made open, as a careless operator might: the runtime closes it.
  const dataDir = newDataDir();
  chmodSync(dataDir, 0o755);
  vnfm = await startVnfm({ dataDir });
  endpoints = JSON.parse(readFileSync(join(vnfm.dataDir, 'endpoints.json'), 'utf8')) as typeof endpoints;
  assert.match(endpoints.lambda, /^http:\/\/127\.0\.0\.1:\d+$/);
  lambda = new LambdaClient({ endpoint: endpoints.lambda, region: endpoints.region, credentials: vnfm.awsCredentials });
});
after(async () => {
  lambda?.destroy();
  await vnfm?.stop();
});

async function invoke(functionName: string, event: unknown): Promise<{ status?: number; functionError?: string; payload: unknown }> {
  const out = await lambda.send(new InvokeCommand({ FunctionName: functionName, Payload: Buffer.from(JSON.stringify(event)) }));
  return { status: out.StatusCode, functionError: out.FunctionError, payload: JSON.parse(Buffer.from(out.Payload ?? []).toString('utf8')) };
}

it("runs a vendor script in ScriptRunnerFunction, which sees nothing of the product's environment or data", async () => {
  const script = `import fs from 'node:fs';
let text = '';
for await (const chunk of process.stdin) text += chunk;
const input = JSON.parse(text);
const attempt = (path) => { try { fs.readFileSync(path); return 'allowed'; } catch (error) { return error.code; } };
console.log(JSON.stringify({ vnf: input.vnfInstance.id, env: Object.keys(process.env).sort(), data: attempt(${JSON.stringify(join(vnfm.dataDir, 'endpoints.json'))}) }));`;
  const request: ScriptRequest = {
    kind: 'lcm-hook',
    script: 'Scripts/instantiate_end.mjs',
    files: { 'Scripts/instantiate_end.mjs': b64(script) },
    input: { operation: 'instantiate_end', request: {}, vnfInstance: { id: 'vnf-1' }, is_rollback: false },
  };
  const answer = await invoke('ScriptRunnerFunction', request);
  assert.equal(answer.status, 200);
  assert.equal(answer.functionError, undefined);
  const result = answer.payload as ScriptResult;
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual(result.ok && result.output, { vnf: 'vnf-1', env: ['HOME', 'LANG', 'PATH', 'TMPDIR'], data: 'ERR_ACCESS_DENIED' });
});

it('keeps its data folder to the runtime user (scripts run as uids of their own): the folder and auth/ 0700, credentials.json 0600', () => {
  const mode = (path: string) => statSync(join(vnfm.dataDir, path)).mode & 0o777;
  assert.equal(mode('.'), 0o700);
  assert.equal(mode('auth'), 0o700);
  assert.equal(mode('credentials.json'), 0o600);
  assert.equal(mode('auth/clients.json'), 0o600);
});

it("gives a script no way to the VNFM's API or its stand-ins, even when its request lists them", async () => {
  const targets = [endpoints.api, endpoints.lambda, endpoints.secretsmanager, endpoints.dynamodb].map((url) => new URL(url));
  const script = `const net = require('node:net');
const probe = (host, port) => new Promise((resolve) => {
  const socket = net.connect({ host, port, timeout: 5000 });
  let data = '';
  socket.on('connect', () => socket.write('GET / HTTP/1.0\\r\\n\\r\\n')).on('data', (chunk) => data += chunk).on('end', () => resolve(data ? 'answered' : 'closed'));
  socket.on('timeout', () => { socket.destroy(); resolve('timeout'); }).on('error', (error) => resolve(error.code));
});
(async () => console.log(JSON.stringify({ reached: await Promise.all(${JSON.stringify(targets.map((url) => [url.hostname, Number(url.port)]))}.map(([host, port]) => probe(host, port))) })))();`;
  const request: ScriptRequest = {
    kind: 'coordinate',
    script: 'Scripts/reach.cjs',
    files: { 'Scripts/reach.cjs': b64(script) },
    input: { operation: 'change_current_package', request: {}, vnfInstance: { id: 'vnf-1' }, is_rollback: false },
    network: { allow: targets.map((url) => ({ host: url.hostname, port: Number(url.port) })) },
  };
  const result = (await invoke('ScriptRunnerFunction', request)).payload as ScriptResult;
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual(result.ok && result.output, { reached: ['closed', 'closed', 'closed', 'closed'] });
});

it('is what invokeScriptRunner reaches through AWS_ENDPOINT_URL_LAMBDA, with failures as ok:false results', async () => {
  process.env.AWS_ENDPOINT_URL_LAMBDA = endpoints.lambda;
  Object.assign(process.env, {
    AWS_REGION: endpoints.region,
    AWS_ACCESS_KEY_ID: vnfm.awsCredentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: vnfm.awsCredentials.secretAccessKey,
  });
  const failing: ScriptRequest = {
    kind: 'coordinate',
    script: './Scripts/coordinate.js',
    files: { 'Scripts/coordinate.js': b64('throw new Error("LB 10.10.0.50 rejected the new member")') },
    input: { operation: 'change_current_package', request: {}, vnfInstance: { id: 'vnf-1' }, is_rollback: false },
  };
  const result = await invokeScriptRunner(failing, 'arn:aws:lambda:us-east-1:000000000000:function:ScriptRunnerFunction');
  assert.equal(result.ok, false);
  assert.deepEqual(!result.ok && result.error, {
    title: 'Coordinate VNF execution failed',
    status: 422,
    detail: 'CoordinateVNF script Scripts/coordinate.js failed: Error: LB 10.10.0.50 rejected the new member',
  });

  const bad = await invokeScriptRunner({ ...failing, script: '/etc/passwd.js' }, 'ScriptRunnerFunction');
  assert.equal(!bad.ok && bad.error.status, 400);
});

it('runs a Tacker-style Python CoordinateVNF script', { skip: findPython() ? false : 'python3 is not installed on this machine' }, async () => {
  const script = `import os
import pickle
import sys


class CoordScript(object):
    def __init__(self, vnfc_param):
        self.vnfc_param = vnfc_param

    def run(self):
        if self.vnfc_param['is_rollback']:
            raise Exception('rollback of %s refused' % self.vnfc_param['ssh_ip'])


def main():
    vnfc_param = pickle.load(sys.stdin.buffer)
    CoordScript(vnfc_param).run()


if __name__ == "__main__":
    try:
        main()
        os._exit(0)
    except Exception as ex:
        sys.stderr.write(str(ex))
        sys.stderr.flush()
        os._exit(1)
`;
  const request: ScriptRequest = {
    kind: 'coordinate',
    script: 'Scripts/coordinate_vnf.py',
    files: { 'Scripts/coordinate_vnf.py': b64(script) },
    input: {
      operation: 'change_current_package',
      request: {},
      vnfInstance: { id: 'vnf-1' },
      vnfcParam: { cp_name: 'CP1', username: 'u', password: 'p' },
      sshIp: '10.0.0.9',
      is_rollback: false,
    },
  };
  assert.equal(((await invoke('ScriptRunnerFunction', request)).payload as ScriptResult).ok, true);
  const rollback = (await invoke('ScriptRunnerFunction', { ...request, input: { ...request.input, is_rollback: true } })).payload as ScriptResult;
  assert.equal(!rollback.ok && rollback.error.detail, 'CoordinateVNF script Scripts/coordinate_vnf.py failed: rollback of 10.0.0.9 refused');
});

it('answers an unknown function with ResourceNotFoundException and a throwing one with Unhandled', async () => {
  await assert.rejects(lambda.send(new InvokeCommand({ FunctionName: 'NoSuchFunction', Payload: Buffer.from('{}') })), ResourceNotFoundException);
  const thrown = await invoke('LcmStepFunction', { opOccId: '00000000-0000-4000-8000-000000000000', action: 'instantiate-poll' });
  assert.equal(thrown.status, 200);
  assert.equal(thrown.functionError, 'Unhandled');
  assert.equal((thrown.payload as { errorType: string }).errorType, 'NotFoundError');
});
