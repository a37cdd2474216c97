// Nothing echoes a secret: distinct passwords are planted in every field that takes one (and in
// places that should not take one: URIs' userinfo, wrong types, wrong attributes), the operations
// run to their end, and then no planted string may appear in any API response, in the runtime's
// output, in any DynamoDB item or in any file under the data folder. The Secrets Manager stand-in is
// the one place they may be, and it keeps its file encrypted, so no file is exempt.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient, ListTablesCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { lcmSteps } from '../support/lcm-http.ts';
import { startNfvoSink, type NfvoSink } from '../support/nfvo-sink.ts';
import { client, localControl, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';

/** One distinct secret per place; each is a string no product text could contain by chance. */
const planted = {
  uploadUserinfo: 'Pw-upload-userinfo-71c2',
  uploadField: 'Pw-upload-field-9a41',
  uploadOauth: 'Pw-upload-oauth-33de',
  callbackUserinfo: 'Pw-callback-userinfo-5e10',
  subscriptionBasic: 'Pw-subscription-basic-c8f2',
  subscriptionOauth: 'Pw-subscription-oauth-1b77',
  vimUserinfo: 'Pw-vim-userinfo-0d93',
  vimWrongPassword: 'Pw-vim-wrong-password-4ae6',
  interfaceUserinfo: 'Pw-interface-userinfo-e5c1',
  createMetadata: 'Pw-create-metadata-62b0',
  createConnection: 'Pw-create-connection-8c3d',
  accessNumber: '918273645546372819',
  accessNested: 'Pw-access-nested-aa54',
  accessString: 'Pw-access-as-string-2f9e',
  interfaceToken: 'Pw-interface-token-7d21',
  instantiateParams: 'Pw-instantiate-params-b3c8',
  healParams: 'Pw-heal-params-44f1',
  modifyAccess: 'Pw-modify-access-d0a6',
  modifyNested: 'Pw-modify-nested-19be',
  changePkgAccess: 'Pw-change-pkg-access-6e3f',
  packageUserData: 'Pw-package-user-data-5c72',
  pmJobBasic: 'Pw-pm-job-basic-7f03',
  pmJobPatchBasic: 'Pw-pm-job-patch-basic-e61a',
  thresholdBasic: 'Pw-threshold-basic-2d8b',
} as const;

let vnfm: LocalVnfm;
let sink: NfvoSink;
let cluster: { endpoint: string; bearer_token: string };
const responses: Reply[] = [];
let call: ReturnType<typeof client>;

before(async () => {
  vnfm = await startVnfm();
  sink = await startNfvoSink({ clientId: 'nfvo', clientPassword: planted.subscriptionOauth });
  cluster = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'))['local-kubernetes'];
  const raw = client(vnfm);
  call = async (...args) => {
    const reply = await raw(...args);
    responses.push(reply);
    return reply;
  };
});
after(async () => {
  await vnfm.stop();
  await sink.close();
});

function assertRefused(reply: Reply, status: number, detail: RegExp): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
  assert.match((reply.body as { detail: string }).detail, detail);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

async function dynamoItems(): Promise<string> {
  const dynamo = new DynamoDBClient({ endpoint: vnfm.endpoints.dynamodb, region: vnfm.endpoints.region, credentials: vnfm.awsCredentials });
  let text = '';
  for (const table of (await dynamo.send(new ListTablesCommand({}))).TableNames ?? []) {
    let start: Record<string, import('@aws-sdk/client-dynamodb').AttributeValue> | undefined;
    do {
      const page = await dynamo.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
      text += JSON.stringify(page.Items ?? []);
      start = page.LastEvaluatedKey;
    } while (start);
  }
  dynamo.destroy();
  return text;
}

describe('no secret is echoed', () => {
  it('refuses credentials in URIs, keeps credentials in their fields out of every record, response, log and file', async () => {
    const { operate, ended, onboard } = lcmSteps(vnfm, call);
    const packageId = (await onboard(['k8s-cnf-v1']))['k8s-cnf-v1'] as string;
    const vnfdId = SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId;

    // Packages: userinfo refused (400 naming the fields to use), the fields themselves taken.
    const pkg = (
      (await call('POST', '/vnfpkgm/v1/vnf_packages', { body: { userDefinedData: { note: 'x', password: planted.packageUserData } } })).body as { id: string }
    ).id;
    for (const v of [1, 2]) {
      assertRefused(
        await call('POST', `/vnfpkgm/v${v}/vnf_packages/${pkg}/package_content/upload_from_uri`, {
          body: { addressInformation: `${sink.url.replace('//', `//nfvo:${planted.uploadUserinfo}@`)}/pkg.zip` },
        }),
        400,
        /userName and password/,
      );
    }
    assertRefused(
      await call('POST', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content/upload_from_uri`, {
        body: {
          addressInformation: `${sink.url}/pkg.zip`,
          paramsOauth2ClientCredentials: {
            clientId: 'c',
            clientPassword: 'p',
            tokenEndpoint: `${sink.url.replace('//', `//c:${planted.uploadOauth}@`)}/token`,
          },
        },
      }),
      400,
      /clientId and clientPassword/,
    );
    assert.equal(
      (
        await call('POST', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content/upload_from_uri`, {
          body: { addressInformation: `${sink.url}/pkg.zip`, userName: 'nfvo', password: planted.uploadField },
        })
      ).status,
      202,
    );
    await settle(vnfm);
    const failed = (await call('GET', `/vnfpkgm/v1/vnf_packages/${pkg}?all_fields`)).body as {
      onboardingState: string;
      onboardingFailureDetails?: { detail: string };
    };
    assert.equal(failed.onboardingState, 'CREATED');
    assert.ok(failed.onboardingFailureDetails?.detail);

    // Subscriptions: userinfo in callbackUri refused; BASIC and OAuth 2.0 credentials accepted.
    const subscription = (extra: Record<string, unknown>) =>
      call('POST', '/vnflcm/v2/subscriptions', { body: { callbackUri: `${sink.url}/cb/secrets`, ...extra } });
    assertRefused(await subscription({ callbackUri: `${sink.url.replace('//', `//nfvo:${planted.callbackUserinfo}@`)}/cb/secrets` }), 400, /credentials/);
    assert.equal(
      (await subscription({ authentication: { authType: ['BASIC'], paramsBasic: { userName: 'nfvo', password: planted.subscriptionBasic } } })).status,
      201,
    );
    assert.equal(
      (
        await subscription({
          authentication: {
            authType: ['OAUTH2_CLIENT_CREDENTIALS'],
            paramsOauth2ClientCredentials: { clientId: 'nfvo', clientPassword: planted.subscriptionOauth, tokenEndpoint: `${sink.url}/token` },
          },
        })
      ).status,
      201,
    );

    // VIM registration: userinfo in the endpoint refused; a wrong password refused without echo.
    const register = (interfaceInfo: Record<string, unknown>, accessInfo: Record<string, unknown>) =>
      call('POST', '/vnfm/v1/vims', { body: { name: `vim-${responses.length}`, vimType: 'kubernetes', interfaceInfo, accessInfo } });
    assertRefused(
      await register({ endpoint: cluster.endpoint.replace('//', `//admin:${planted.vimUserinfo}@`) }, { bearer_token: cluster.bearer_token }),
      400,
      /credentials/,
    );
    assert.equal((await register({ endpoint: cluster.endpoint }, { bearer_token: planted.vimWrongPassword })).status, 422);

    // Instances: credentials in the wrong place or with the wrong type.
    assert.equal(
      (
        await call('POST', '/vnflcm/v2/vnf_instances', {
          body: { vnfdId, vimConnectionInfo: { vim1: { accessInfo: { password: planted.createConnection } } } },
        })
      ).status,
      400,
    );
    const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, metadata: { owner: 'team', password: planted.createMetadata } } });
    assert.equal(created.status, 201, created.text);
    const id = (created.body as { id: string }).id;
    const connection = (accessInfo: unknown, interfaceInfo: Record<string, unknown> = { endpoint: cluster.endpoint }) => ({
      vim1: { vimType: 'kubernetes', interfaceInfo, accessInfo },
    });
    const instantiate = (vimConnectionInfo: unknown, additionalParams: Record<string, unknown> = {}) => ({
      flavourId: 'simple',
      vimConnectionInfo,
      additionalParams: {
        'lcm-kubernetes-def-files': ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'],
        namespace: 'secrets',
        ...additionalParams,
      },
    });
    assertRefused(await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, { body: instantiate(connection(planted.accessString)) }), 400, /accessInfo/);
    assertRefused(
      await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, {
        body: instantiate(
          connection({ bearer_token: cluster.bearer_token }, { endpoint: cluster.endpoint.replace('//', `//admin:${planted.interfaceUserinfo}@`) }),
        ),
      }),
      400,
      /credentials/,
    );
    const accessInfo = { bearer_token: cluster.bearer_token, password: Number(planted.accessNumber), more: { secret: { value: planted.accessNested } } };
    // interfaceInfo is shown in every response: an attribute named like a credential there is refused.
    assertRefused(
      await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, {
        body: instantiate(connection(accessInfo, { endpoint: cluster.endpoint, token: planted.interfaceToken })),
      }),
      400,
      /interfaceInfo.*named like a credential/,
    );
    await ended(
      await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, instantiate(connection(accessInfo), { password: planted.instantiateParams })),
      'COMPLETED',
    );
    await ended(await operate(`/vnflcm/v2/vnf_instances/${id}/heal`, { additionalParams: { nested: { password: planted.healParams } } }), 'COMPLETED');
    const modify = await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, {
      body: {
        vimConnectionInfo: {
          vim1: { accessInfo: { bearer_token: cluster.bearer_token, password: planted.modifyAccess } },
          vim2: { vimType: 'kubernetes', interfaceInfo: { endpoint: cluster.endpoint }, accessInfo: { deep: [{ token: planted.modifyNested }] } },
        },
      },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(modify.status, 202, modify.text);
    await ended(new URL(modify.headers.get('location') ?? '').pathname, 'COMPLETED');
    assert.ok(
      [400, 422].includes(
        (
          await call('POST', `/vnflcm/v2/vnf_instances/${id}/change_vnfpkg`, {
            body: { vnfdId, vimConnectionInfo: connection({ password: planted.changePkgAccess }) },
          })
        ).status,
      ),
    );

    // PM jobs and thresholds: their notification credentials, also replaced by a PATCH, and a collection that notifies.
    const PM = { version: '2.2.0' };
    const basic = (password: string) => ({ authType: ['BASIC'], paramsBasic: { userName: 'nfvo', password } });
    const pmJob = await call('POST', '/vnfpm/v2/pm_jobs', {
      ...PM,
      body: {
        objectType: 'Vnf',
        objectInstanceIds: [id],
        criteria: { performanceMetric: ['VCpuUsageMeanVnf'], collectionPeriod: 30, reportingPeriod: 30 },
        callbackUri: `${sink.url}/cb/pm`,
        authentication: basic(planted.pmJobBasic),
      },
    });
    assert.equal(pmJob.status, 201, pmJob.text);
    const patched = await call('PATCH', `/vnfpm/v2/pm_jobs/${(pmJob.body as { id: string }).id}`, {
      ...PM,
      body: { authentication: basic(planted.pmJobPatchBasic) },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(patched.status, 200, patched.text);
    const threshold = await call('POST', '/vnfpm/v2/thresholds', {
      ...PM,
      body: {
        objectType: 'Vnf',
        objectInstanceId: id,
        criteria: { performanceMetric: 'VCpuUsageMeanVnf', thresholdType: 'SIMPLE', simpleThresholdDetails: { thresholdValue: -1, hysteresis: 0 } },
        callbackUri: `${sink.url}/cb/pm`,
        authentication: basic(planted.thresholdBasic),
      },
    });
    assert.equal(threshold.status, 201, threshold.text);
    const collection = await localControl(vnfm, 'POST', '/_local/schedules/VnfPmCollectorFunction/run');
    const collected = await collection.text();
    assert.equal(collection.status, 200, collected);
    await settle(vnfm);
    assert.ok(sink.accepted('/cb/pm').length >= 2, `a report and a crossing were notified: ${collected}`);
    for (const path of ['/vnfpm/v2/pm_jobs?all_fields', '/vnfpm/v2/thresholds']) assert.equal((await call('GET', path, PM)).status, 200, path);

    // Read everything back the ways an NFVO would, so the responses include every representation.
    for (const path of [
      '/vnflcm/v2/vnf_lcm_op_occs',
      `/vnflcm/v2/vnf_instances/${id}`,
      '/vnflcm/v2/vnf_instances',
      '/vnflcm/v2/subscriptions',
      '/vnfm/v1/vims',
      '/v1.0/vims.json',
      `/vnfpkgm/v1/vnf_packages?all_fields`,
      `/vnfpkgm/v1/vnf_packages/${packageId}`,
    ]) {
      assert.equal((await call('GET', path)).status, 200, path);
    }
    const occs = (await call('GET', '/vnflcm/v2/vnf_lcm_op_occs?all_fields')).body as Array<{ operationParams?: Record<string, unknown> }>;
    assert.ok(
      occs.some((occ) => (occ.operationParams as { additionalParams?: { namespace?: string } } | undefined)?.additionalParams?.namespace === 'secrets'),
      'operationParams are still recorded',
    );
    await settle(vnfm);

    const places: Array<[string, string]> = [
      ['API responses', responses.map((reply) => `${reply.text} ${JSON.stringify([...reply.headers])}`).join('\n')],
      ['runtime output', vnfm.output()],
      ['notifications', JSON.stringify(sink.received)],
      ['DynamoDB items', await dynamoItems()],
      ...filesUnder(vnfm.dataDir).map((path): [string, string] => [path.slice(vnfm.dataDir.length), readFileSync(path).toString('latin1')]),
    ];
    const leaks = places.flatMap(([where, text]) =>
      Object.entries(planted)
        .filter(([, secret]) => text.includes(secret))
        .map(([name]) => `${name} in ${where}`),
    );
    assert.deepEqual(leaks, []);
  });
});
