// Unit tests for test/support/etsi.ts: response and named-schema validation against the ETSI V3.7.1 OpenAPI files.

import { describe, it } from 'node:test';
import assert, { AssertionError } from 'node:assert/strict';
import { assertEtsiResponse, assertEtsiSchema, ETSI_API_FILES } from '../../support/etsi.ts';

const VNF_INSTANCE = {
  id: '5b4b2b3e-8d1c-4f3e-9a51-0c7d2f1e9a10',
  vnfdId: 'b1bb0ce7-ebca-4fa7-95ed-4840d70a1177',
  vnfProvider: 'Company',
  vnfProductName: 'Sample VNF',
  vnfSoftwareVersion: '1.0',
  vnfdVersion: '1.0',
  instantiationState: 'NOT_INSTANTIATED',
  _links: {
    self: { href: 'http://localhost:3000/vnflcm/v2/vnf_instances/5b4b2b3e-8d1c-4f3e-9a51-0c7d2f1e9a10' },
    instantiate: { href: 'http://localhost:3000/vnflcm/v2/vnf_instances/5b4b2b3e-8d1c-4f3e-9a51-0c7d2f1e9a10/instantiate' },
  },
};

const PROBLEM = {
  type: 'about:blank',
  title: 'Bad Request',
  status: 400,
  detail: 'vnfdId is required',
  instance: '/vnflcm/v2/vnf_instances',
};

const API_VERSIONS = { uriPrefix: '/vnflcm/v2', apiVersions: [{ version: '2.0.0', isDeprecated: false }] };

const OP_OCC = {
  id: '9c1e3a4e-0d7b-4b9e-8f6a-2b8c1d0e4f21',
  operationState: 'PROCESSING',
  stateEnteredTime: '2026-01-01T00:00:01Z',
  startTime: '2026-01-01T00:00:00Z',
  vnfInstanceId: VNF_INSTANCE.id,
  operation: 'INSTANTIATE',
  isAutomaticInvocation: false,
  isCancelPending: false,
  _links: {
    self: { href: 'http://localhost:3000/vnflcm/v2/vnf_lcm_op_occs/9c1e3a4e-0d7b-4b9e-8f6a-2b8c1d0e4f21' },
    vnfInstance: { href: VNF_INSTANCE._links.self.href },
  },
};

/** Rejects with an AssertionError whose message matches every pattern. */
async function fails(promise: Promise<void>, ...patterns: RegExp[]): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof AssertionError, `expected an AssertionError, got ${String(error)}`);
    for (const pattern of patterns) assert.match(error.message, pattern);
    return true;
  });
}

describe('assertEtsiResponse', () => {
  it('accepts a NOT_INSTANTIATED VnfInstance for POST /vnf_instances 201', async () => {
    await assertEtsiResponse('vnflcm', '/vnf_instances', 'post', 201, VNF_INSTANCE);
  });

  it('refuses a VnfInstance without instantiationState, naming the property', async () => {
    const { instantiationState: _omitted, ...body } = VNF_INSTANCE;
    await fails(
      assertEtsiResponse('vnflcm', '/vnf_instances', 'post', 201, body),
      /vnflcm POST \/vnf_instances 201/,
      /\/: must have required property 'instantiationState'/,
    );
  });

  it('lists every error with its instance path', async () => {
    const body = { ...VNF_INSTANCE, instantiationState: 'STARTED', vnfdId: 42, _links: { self: {} } };
    await fails(
      assertEtsiResponse('vnflcm', '/vnf_instances', 'post', 201, body),
      /\/instantiationState: must be equal to one of the allowed values \("NOT_INSTANTIATED", "INSTANTIATED"\)/,
      /\/vnfdId: must be string/,
      /\/_links\/self: must have required property 'href'/,
    );
  });

  it('accepts a ProblemDetails for a 400 and refuses one without detail', async () => {
    await assertEtsiResponse('vnflcm', '/vnf_instances', 'post', 400, PROBLEM);
    await assertEtsiResponse('vnflcm', '/vnf_instances/{vnfInstanceId}', 'get', 404, { ...PROBLEM, status: 404, title: 'Not Found' });
    const { detail: _omitted, ...body } = PROBLEM;
    await fails(assertEtsiResponse('vnflcm', '/vnf_instances', 'post', 400, body), /must have required property 'detail'/);
  });

  it('accepts ApiVersionInformation for GET /api_versions 200 of each API that has it', async () => {
    for (const api of ['vnflcm', 'vnfpkgm', 'vnfpkgm-sol003', 'grant', 'lcm-coordination'] as const) {
      await assertEtsiResponse(api, '/api_versions', 'get', 200, API_VERSIONS);
    }
    await fails(assertEtsiResponse('vnflcm', '/api_versions', 'GET', 200, { uriPrefix: '/vnflcm/v2' }), /must have required property 'apiVersions'/);
  });

  it('validates list responses as arrays', async () => {
    await assertEtsiResponse('vnflcm', '/vnf_instances', 'get', 200, [VNF_INSTANCE, { ...VNF_INSTANCE, id: 'other' }]);
    await assertEtsiResponse('vnflcm', '/vnf_instances', 'get', 200, []);
    await fails(assertEtsiResponse('vnflcm', '/vnf_instances', 'get', 200, VNF_INSTANCE), /\/: must be array/);
    await fails(assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs', 'get', 200, [OP_OCC, { id: 'x' }]), /\/1: must have required property 'operationState'/);
  });

  it('matches concrete and API-root-prefixed paths to the templated OpenAPI path', async () => {
    await assertEtsiResponse('vnflcm', `/vnf_instances/${VNF_INSTANCE.id}`, 'get', 200, VNF_INSTANCE);
    await assertEtsiResponse('vnflcm', `/vnflcm/v2/vnf_instances/${VNF_INSTANCE.id}`, 'get', 200, VNF_INSTANCE);
    await assertEtsiResponse('vnfpkgm', '/vnfpkgm/v1/api_versions', 'get', 200, { ...API_VERSIONS, uriPrefix: '/vnfpkgm/v1' });
  });

  it('requires an empty body where the API documents none', async () => {
    await assertEtsiResponse('vnflcm', '/vnf_instances/{vnfInstanceId}', 'delete', 204, undefined);
    await assertEtsiResponse('vnflcm', '/vnf_instances/{vnfInstanceId}/instantiate', 'post', 202, '');
    await fails(assertEtsiResponse('vnflcm', '/vnf_instances/{vnfInstanceId}', 'delete', 204, { id: 'x' }), /has no body/);
  });

  it('refuses undocumented paths, methods and statuses', async () => {
    await fails(assertEtsiResponse('vnflcm', '/vnf_instancez', 'get', 200, []), /no such path/);
    await fails(assertEtsiResponse('vnflcm', '/vnf_instances/{vnfInstanceId}', 'put', 200, {}), /PUT is not documented/);
    await fails(assertEtsiResponse('vnflcm', '/vnf_instances', 'post', 418, {}), /status 418 is not documented \(documented: 201, 400/);
  });

  it('corrects the list/single mix-ups of the V3.7.1 response schemas', async () => {
    await assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs', 'get', 200, [OP_OCC]);
    await fails(assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs', 'get', 200, OP_OCC), /\/: must be array/);
    const subscription = {
      id: 's1',
      callbackUri: 'http://nfvo.example.com/callback',
      verbosity: 'FULL',
      _links: { self: { href: 'http://localhost:3000/vnflcm/v2/subscriptions/s1' } },
    };
    await assertEtsiResponse('vnflcm', '/subscriptions', 'get', 200, [subscription]);
    await assertEtsiResponse('vnflcm', '/subscriptions', 'post', 201, subscription);
  });

  it('accepts localhost and relative URLs for format "url" (SOL005 links)', async () => {
    const pkg = {
      id: 'p1',
      onboardingState: 'CREATED',
      operationalState: 'DISABLED',
      usageState: 'NOT_IN_USE',
      _links: {
        self: { href: 'http://127.0.0.1:3000/vnfpkgm/v1/vnf_packages/p1' },
        vnfd: { href: 'http://localhost:3000/vnfpkgm/v1/vnf_packages/p1/vnfd' },
        packageContent: { href: '/vnfpkgm/v1/vnf_packages/p1/package_content' },
      },
    };
    await assertEtsiResponse('vnfpkgm', '/vnf_packages/{vnfPkgId}', 'get', 200, pkg);
    await fails(
      assertEtsiResponse('vnfpkgm', '/vnf_packages/{vnfPkgId}', 'get', 200, { ...pkg, _links: { ...pkg._links, self: { href: 'not a url' } } }),
      /\/_links\/self\/href: must match format "url"/,
    );
  });
});

describe('assertEtsiSchema', () => {
  it('validates named definitions of the API and its general definitions', async () => {
    await assertEtsiSchema('vnflcm', 'VnfInstance', VNF_INSTANCE);
    await assertEtsiSchema('vnflcm', 'VnfLcmOpOcc', OP_OCC);
    await assertEtsiSchema('vnflcm', 'ProblemDetails', PROBLEM);
    await assertEtsiSchema('vnflcm', 'ApiVersionInformation', API_VERSIONS);
    await assertEtsiSchema('vnflcm-notification', 'VnfIdentifierCreationNotification', {
      id: 'n1',
      notificationType: 'VnfIdentifierCreationNotification',
      subscriptionId: 's1',
      timeStamp: '2026-01-01T00:00:00Z',
      vnfInstanceId: VNF_INSTANCE.id,
      _links: { vnfInstance: { href: VNF_INSTANCE._links.self.href }, subscription: { href: 'http://localhost:3000/vnflcm/v2/subscriptions/s1' } },
    });
    await fails(
      assertEtsiSchema('vnflcm', 'VnfLcmOpOcc', { ...OP_OCC, operation: 'EXPLODE' }),
      /vnflcm VnfLcmOpOcc/,
      /\/operation: must be equal to one of the allowed values/,
    );
  });

  it('throws for an unknown definition', async () => {
    await assert.rejects(assertEtsiSchema('grant', 'NoSuchThing', {}), /no definition "NoSuchThing"/);
  });

  it('checks the ETSI formats IP, MAC, URI and date-time', async () => {
    const address = { macAddress: 'fa:16:3e:00:00:01', ipAddresses: [{ type: 'IPV6', addresses: ['2001:db8::1'], isDynamic: false }] };
    await assertEtsiSchema('vnflcm', 'IpOverEthernetAddressInfo', address);
    await fails(
      assertEtsiSchema('vnflcm', 'IpOverEthernetAddressInfo', { macAddress: 'fa:16:3e', ipAddresses: [{ type: 'IPV4', addresses: ['10.0.0.256'] }] }),
      /\/macAddress: must match format "MAC"/,
      /\/ipAddresses\/0\/addresses\/0: must match format "IP"/,
    );
    await fails(assertEtsiSchema('vnflcm', 'ProblemDetails', { ...PROBLEM, type: 'not a uri' }), /\/type: must match format "URI"/);
    await fails(assertEtsiSchema('vnflcm', 'VnfLcmOpOcc', { ...OP_OCC, startTime: 'yesterday' }), /\/startTime: must match format "date-time"/);
  });

  it('applies the documented corrections without loosening the NOTEs they encode', async () => {
    // NOTE 2 of VnfLcmOpOcc: not more than one of changedInfo and modificationsTriggeredByVnfPkgChange.
    await assertEtsiSchema('vnflcm', 'VnfLcmOpOcc', { ...OP_OCC, operationState: 'COMPLETED', operation: 'MODIFY_INFO', changedInfo: {} });
    await fails(
      assertEtsiSchema('vnflcm', 'VnfLcmOpOcc', { ...OP_OCC, changedInfo: {}, modificationsTriggeredByVnfPkgChange: {} }),
      /must NOT match \{"required":\["changedInfo","modificationsTriggeredByVnfPkgChange"\]\}/,
    );
    // Exactly one of addresses / addressRange, per ipAddresses item.
    await fails(
      assertEtsiSchema('vnflcm', 'IpOverEthernetAddressInfo', { ipAddresses: [{ type: 'IPV4', isDynamic: true }] }),
      /\/ipAddresses\/0: must match exactly one schema in oneOf/,
    );
    // Subscription filters: alternatives are optional, but not both.
    await assertEtsiSchema('vnflcm', 'VnfInstanceSubscriptionFilter', { vnfdIds: ['d1'] });
    await assertEtsiSchema('vnfpkgm-sol003', 'PkgmNotificationsFilter', { notificationTypes: ['VnfPackageOnboardingNotification'] });
    await fails(assertEtsiSchema('vnflcm', 'VnfInstanceSubscriptionFilter', { vnfInstanceIds: ['a'], vnfInstanceNames: ['b'] }), /must NOT match/);
    // SOL005 PkgmSubscription: an Identifier id, and notificationTypes as a list of the two types.
    const pkgmSubscription = { id: 'a5b3c1d2', callbackUri: 'http://nfvo/cb', _links: { self: { href: 'http://vnfm/vnfpkgm/v2/subscriptions/a5b3c1d2' } } };
    await assertEtsiSchema('vnfpkgm', 'PkgmSubscription', {
      ...pkgmSubscription,
      filter: { notificationTypes: ['VnfPackageChangeNotification'], vnfdId: ['d1'] },
    });
    await fails(
      assertEtsiSchema('vnfpkgm', 'PkgmSubscription', { ...pkgmSubscription, filter: { notificationTypes: ['VnfPackageDeletedNotification'] } }),
      /must be equal to one of the allowed values/,
    );
    await fails(assertEtsiSchema('vnfpkgm', 'PkgmSubscription', { ...pkgmSubscription, filter: { vnfdId: ['d1'], vnfPkgId: ['p1'] } }), /must NOT match/);
    // Untouched: VnfExtCpInfo's "exactly one of" associated* is encoded correctly.
    await fails(
      assertEtsiSchema('vnflcm', 'VnfExtCpInfo', { id: 'c', cpdId: 'd', cpConfigId: 'e', cpProtocolInfo: [] }),
      /must match exactly one schema in oneOf/,
    );
    // VnfSnapshot and VnfcSnapshotInfo under their V3.7.1 names; what they require still required.
    const vnfcSnapshot = { id: 'c1', vnfcInstanceId: 'VDU1-r1', vnfcResourceInfoId: 'r1', creationStartedAt: '2026-12-01T00:00:00Z' };
    const vnfSnapshot = { id: 's', vnfInstanceId: 'i', creationStartedAt: '2026-12-01T00:00:00Z', vnfdId: 'd', vnfcSnapshots: [vnfcSnapshot] };
    await assertEtsiSchema('vnflcm', 'VnfSnapshot', vnfSnapshot);
    await fails(assertEtsiSchema('vnflcm', 'VnfSnapshot', { ...vnfSnapshot, creationStartedAt: undefined }), /creationStartedAt/);
    await fails(assertEtsiSchema('vnflcm', 'VnfcSnapshotInfo', { ...vnfcSnapshot, vnfcResourceInfoId: undefined }), /vnfcResourceInfoId/);
  });

  it('corrects the PM schemas where the YAML contradicts SOL003 clause 6, keeping what they require', async () => {
    const job = {
      id: 'j',
      objectType: 'Vnf',
      objectInstanceIds: ['i'],
      criteria: { performanceMetric: ['VCpuUsageMeanVnf'], collectionPeriod: 3600, reportingPeriod: 7200 },
      callbackUri: 'http://nfvo/cb',
      reports: [{ href: 'http://vnfm/vnfpm/v2/pm_jobs/j/reports/r', readyTime: '2026-12-01T00:00:00Z', fileSize: 4096 }],
      _links: { self: { href: 'http://vnfm/vnfpm/v2/pm_jobs/j' } },
    };
    await assertEtsiResponse('vnfpm', '/pm_jobs/{pmJobId}', 'get', 200, job);
    await fails(assertEtsiResponse('vnfpm', '/pm_jobs/{pmJobId}', 'get', 200, { ...job, reports: [{ href: 'http://vnfm/r' }] }), /readyTime/);
    const entry = {
      objectType: 'Vnf',
      objectInstanceId: 'i',
      performanceMetric: 'VCpuUsageMeanVnf',
      performanceValues: [{ timeStamp: '2026-12-01T00:00:00Z', value: 42.5 }],
    };
    await assertEtsiResponse('vnfpm', '/pm_jobs/{pmJobId}/reports/{reportId}', 'get', 200, { entries: [entry] });
    await fails(
      assertEtsiResponse('vnfpm', '/pm_jobs/{pmJobId}/reports/{reportId}', 'get', 200, { entries: [{ ...entry, performanceValues: undefined }] }),
      /performanceValues/,
    );
    // A PATCH of authentication only answers without it; a callbackUri must still be a string.
    await assertEtsiResponse('vnfpm', '/thresholds/{thresholdId}', 'patch', 200, {});
    await fails(assertEtsiResponse('vnfpm', '/pm_jobs/{pmJobId}', 'patch', 200, { callbackUri: 7 }), /string/);
    const crossed = {
      id: 'n',
      notificationType: 'ThresholdCrossedNotification',
      timeStamp: '2026-12-01T00:00:00Z',
      thresholdId: 't',
      crossingDirection: 'UP',
      objectType: 'Vnf',
      objectInstanceId: 'i',
      performanceMetric: 'VCpuUsageMeanVnf',
      performanceValue: 91,
      _links: { threshold: { href: 'http://vnfm/vnfpm/v2/thresholds/t' } },
    };
    await assertEtsiSchema('vnfpm-notification', 'ThresholdCrossedNotification', crossed);
    await fails(assertEtsiSchema('vnfpm-notification', 'ThresholdCrossedNotification', { ...crossed, crossingDirection: 'SIDEWAYS' }), /allowed values/);
    await assertEtsiResponse('vnfpm', '/api_versions', 'get', 200, { uriPrefix: '/vnfpm/v2', apiVersions: [{ version: '2.2.0' }] });
  });

  it('knows the OpenAPI file of every API', () => {
    assert.deepEqual(Object.keys(ETSI_API_FILES).sort(), [
      'grant',
      'lcm-coordination',
      'vnffm',
      'vnffm-notification',
      'vnflcm',
      'vnflcm-notification',
      'vnfpkgm',
      'vnfpkgm-notification',
      'vnfpkgm-sol003',
      'vnfpm',
      'vnfpm-notification',
    ]);
  });
});
