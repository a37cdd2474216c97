// With NfvoGrantEndpoint set, every LCM operation asks the NFVO for a SOL003 grant first; a refused
// grant ends the operation FAILED_TEMP with the NFVO's reason, and the GrantRequest is valid SOL003.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { assertEtsiSchema } from '../support/etsi.ts';
import { client, settle, startVnfm, type LocalVnfm } from '../support/runtime.ts';

const requests: Array<Record<string, unknown>> = [];
let refuse = false;
const nfvo = http.createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => {
    body += chunk.toString();
  });
  req.on('end', () => {
    if (req.method !== 'POST' || req.url !== '/grant/v1/grants') {
      res.writeHead(404).end();
      return;
    }
    const grantRequest = JSON.parse(body) as Record<string, unknown>;
    requests.push(grantRequest);
    if (refuse) {
      res.writeHead(403, { 'Content-Type': 'application/problem+json' }).end(JSON.stringify({ status: 403, detail: 'no capacity left in zone A' }));
      return;
    }
    res.writeHead(201, { 'Content-Type': 'application/json' }).end(
      JSON.stringify({
        id: 'grant-1',
        vnfInstanceId: grantRequest.vnfInstanceId,
        vnfLcmOpOccId: grantRequest.vnfLcmOpOccId,
        zones: [{ id: 'z1', zoneId: 'nova' }],
        _links: { self: { href: 'http://nfvo/grant/v1/grants/grant-1' }, vnfLcmOpOcc: { href: 'x' }, vnfInstance: { href: 'y' } },
      }),
    );
  });
});

let vnfm: LocalVnfm;
before(async () => {
  await new Promise<void>((resolve) => nfvo.listen(0, '127.0.0.1', resolve));
  vnfm = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: `NfvoGrantEndpoint=http://127.0.0.1:${(nfvo.address() as AddressInfo).port}` } });
});
after(async () => {
  await vnfm.stop();
  nfvo.close();
});

it("asks the NFVO for a grant, and a refused grant ends FAILED_TEMP with the NFVO's reason", async () => {
  const call = client(vnfm);
  const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
  await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, {
    raw: await buildCsar('openstack-vnf-v1'),
    headers: { 'Content-Type': 'application/zip' },
  });
  await settle(vnfm);
  const instantiate = {
    flavourId: 'simple',
    extVirtualLinks: [
      { id: 'ext', resourceId: 'public', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { a: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }] },
    ],
  };
  const create = async () =>
    ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId } })).body as { id: string }).id;

  const granted = await create();
  const ok = await call('POST', `/vnflcm/v2/vnf_instances/${granted}/instantiate`, { body: instantiate });
  await settle(vnfm);
  const occ = (await call('GET', new URL(ok.headers.get('location') ?? '').pathname)).body as { operationState: string };
  assert.equal(occ.operationState, 'COMPLETED');
  const grantRequest = requests[0] as {
    vnfInstanceId: string;
    operation: string;
    flavourId: string;
    addResources: Array<{ type: string; resourceTemplateId: string }>;
  };
  assert.equal(grantRequest.vnfInstanceId, granted);
  assert.equal(grantRequest.operation, 'INSTANTIATE');
  assert.equal(grantRequest.flavourId, 'simple');
  assert.ok(grantRequest.addResources.some((r) => r.type === 'COMPUTE' && r.resourceTemplateId === 'VDU1'));
  await assertEtsiSchema('grant', 'GrantRequest', grantRequest);

  refuse = true;
  const refused = await create();
  const reply = await call('POST', `/vnflcm/v2/vnf_instances/${refused}/instantiate`, { body: instantiate });
  await settle(vnfm);
  const failed = (await call('GET', new URL(reply.headers.get('location') ?? '').pathname)).body as { operationState: string; error: { detail: string } };
  assert.equal(failed.operationState, 'FAILED_TEMP');
  assert.match(failed.error.detail, /no capacity left in zone A/);
});
