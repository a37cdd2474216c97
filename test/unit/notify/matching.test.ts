// Subscription filters (SOL003 5.5.3.12, 4.4.1.5) and the notifications rendered for a subscription.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  lifecycleChangeNotificationsFilter,
  renderNotification,
  subscriptionMatches,
  type LifecycleChangeNotificationsFilter,
  type NotificationEvent,
} from '#lib/lcm/notifications.ts';
import { stableId } from '#lib/notify/model.ts';
import { assertEtsiSchema } from '../../support/etsi.ts';

const instance = {
  vnfdId: 'vnfd-1',
  vnfProvider: 'Company',
  vnfProductName: 'Sample VNF',
  vnfSoftwareVersion: '1.0',
  vnfdVersion: '2.0',
  vnfInstanceName: 'vnf-a',
};
const created: NotificationEvent = {
  kind: 'event',
  notificationId: stableId('i-1/created'),
  notificationType: 'VnfIdentifierCreationNotification',
  tenantId: 't',
  groupId: 'i-1',
  vnfInstanceId: 'i-1',
  timeStamp: '2026-12-01T10:00:00Z',
  instance,
};
const completed: NotificationEvent = {
  ...created,
  notificationId: stableId('o-1/COMPLETED'),
  notificationType: 'VnfLcmOperationOccurrenceNotification',
  opOcc: {
    id: 'o-1',
    operation: 'INSTANTIATE',
    operationState: 'COMPLETED',
    isAutomaticInvocation: false,
    resourceChanges: {
      affectedVnfcs: [{ id: 'c-1', vduId: 'VDU1', changeType: 'ADDED', computeResource: { resourceId: 'server-1' } }],
      affectedVirtualLinks: [],
    },
    changedInfo: { vnfInstanceName: 'vnf-a' },
  },
};
const failed: NotificationEvent = {
  ...completed,
  opOcc: { ...completed.opOcc!, operationState: 'FAILED_TEMP', error: { title: 'Conflict', status: 409, detail: 'no valid host' } },
};

function filter(f: unknown): LifecycleChangeNotificationsFilter {
  return lifecycleChangeNotificationsFilter.parse(f);
}

describe('subscriptionMatches', () => {
  it('matches everything without a filter', () => {
    assert.ok(subscriptionMatches(undefined, created) && subscriptionMatches(undefined, completed));
  });

  it('notificationTypes, operationTypes and operationStates; the latter two only for op occ notifications', () => {
    assert.ok(!subscriptionMatches(filter({ notificationTypes: ['VnfIdentifierDeletionNotification'] }), created));
    assert.ok(subscriptionMatches(filter({ notificationTypes: ['VnfIdentifierCreationNotification', 'VnfIdentifierDeletionNotification'] }), created));
    assert.ok(subscriptionMatches(filter({ operationTypes: ['INSTANTIATE'] }), completed));
    assert.ok(!subscriptionMatches(filter({ operationTypes: ['TERMINATE', 'SCALE'] }), completed));
    assert.ok(subscriptionMatches(filter({ operationTypes: ['TERMINATE'] }), created), 'identifier notifications are not op occ notifications');
    assert.ok(!subscriptionMatches(filter({ operationStates: ['STARTING'] }), completed));
    assert.ok(subscriptionMatches(filter({ operationStates: ['FAILED_TEMP', 'COMPLETED'] }), completed));
  });

  it('VNF instance filters: vnfdIds, products from providers down to VNFD versions, instance ids and names', () => {
    const instanceFilter = (f: unknown) => filter({ vnfInstanceSubscriptionFilter: f });
    assert.ok(subscriptionMatches(instanceFilter({ vnfdIds: ['other', 'vnfd-1'] }), created));
    assert.ok(!subscriptionMatches(instanceFilter({ vnfdIds: ['other'] }), created));
    assert.ok(subscriptionMatches(instanceFilter({ vnfProductsFromProviders: [{ vnfProvider: 'Company' }] }), created));
    assert.ok(!subscriptionMatches(instanceFilter({ vnfProductsFromProviders: [{ vnfProvider: 'Other' }] }), created));
    assert.ok(
      subscriptionMatches(
        instanceFilter({
          vnfProductsFromProviders: [
            {
              vnfProvider: 'Company',
              vnfProducts: [{ vnfProductName: 'Sample VNF', versions: [{ vnfSoftwareVersion: '1.0', vnfdVersions: ['1.0', '2.0'] }] }],
            },
          ],
        }),
        created,
      ),
    );
    assert.ok(
      !subscriptionMatches(
        instanceFilter({
          vnfProductsFromProviders: [
            { vnfProvider: 'Company', vnfProducts: [{ vnfProductName: 'Sample VNF', versions: [{ vnfSoftwareVersion: '1.0', vnfdVersions: ['1.0'] }] }] },
          ],
        }),
        created,
      ),
    );
    assert.ok(
      !subscriptionMatches(
        instanceFilter({
          vnfProductsFromProviders: [{ vnfProvider: 'Company', vnfProducts: [{ vnfProductName: 'Sample VNF', versions: [{ vnfSoftwareVersion: '9.9' }] }] }],
        }),
        created,
      ),
    );
    assert.ok(subscriptionMatches(instanceFilter({ vnfInstanceIds: ['i-1'] }), created));
    assert.ok(!subscriptionMatches(instanceFilter({ vnfInstanceIds: ['i-2'] }), created));
    assert.ok(subscriptionMatches(instanceFilter({ vnfInstanceNames: ['vnf-a'] }), created));
    assert.ok(!subscriptionMatches(instanceFilter({ vnfInstanceNames: ['vnf-b'] }), created));
    assert.ok(
      !subscriptionMatches(
        filter({ notificationTypes: ['VnfIdentifierCreationNotification'], vnfInstanceSubscriptionFilter: { vnfdIds: ['other'] } }),
        created,
      ),
      'all attributes must match',
    );
  });

  it('refuses operation filters beside notification types that exclude op occ notifications', () => {
    assert.equal(
      lifecycleChangeNotificationsFilter.safeParse({ notificationTypes: ['VnfIdentifierCreationNotification'], operationTypes: ['INSTANTIATE'] }).success,
      false,
    );
    assert.equal(
      lifecycleChangeNotificationsFilter.safeParse({ notificationTypes: ['VnfLcmOperationOccurrenceNotification'], operationTypes: ['INSTANTIATE'] }).success,
      true,
    );
  });
});

describe('renderNotification', () => {
  const subscription = { id: 's-1', verbosity: 'FULL' as const, apiMajorVersion: 2 as const, apiRoot: 'https://vnfm.example.com' };

  it('FULL carries the changes, SHORT does not; both are valid ETSI notifications with links to the subscription API', async () => {
    const full = renderNotification(completed, subscription);
    await assertEtsiSchema('vnflcm-notification', 'VnfLcmOperationOccurrenceNotification', full);
    assert.equal(full.notificationStatus, 'RESULT');
    assert.deepEqual(full.affectedVnfcs, completed.opOcc?.resourceChanges?.affectedVnfcs);
    assert.equal(full.affectedVirtualLinks, undefined, 'empty change lists are left out');
    assert.deepEqual(full.changedInfo, { vnfInstanceName: 'vnf-a' });
    assert.deepEqual(full._links, {
      vnfInstance: { href: 'https://vnfm.example.com/vnflcm/v2/vnf_instances/i-1' },
      subscription: { href: 'https://vnfm.example.com/vnflcm/v2/subscriptions/s-1' },
      vnfLcmOpOcc: { href: 'https://vnfm.example.com/vnflcm/v2/vnf_lcm_op_occs/o-1' },
    });
    const short = renderNotification(completed, { ...subscription, verbosity: 'SHORT', apiMajorVersion: 1 });
    await assertEtsiSchema('vnflcm-notification', 'VnfLcmOperationOccurrenceNotification', short);
    assert.equal(short.affectedVnfcs, undefined);
    assert.equal(short.changedInfo, undefined);
    assert.equal(short.verbosity, 'SHORT');
    assert.match((short._links as { vnfInstance: { href: string } }).vnfInstance.href, /\/vnflcm\/v1\//);
  });

  it('START for STARTING, error only in FAILED_TEMP, FAILED and ROLLED_BACK, the same id for every subscription', async () => {
    const starting = renderNotification({ ...completed, opOcc: { ...completed.opOcc!, operationState: 'STARTING' } }, subscription);
    assert.equal(starting.notificationStatus, 'START');
    assert.equal(starting.affectedVnfcs, undefined);
    const failure = renderNotification(failed, subscription);
    await assertEtsiSchema('vnflcm-notification', 'VnfLcmOperationOccurrenceNotification', failure);
    assert.deepEqual(failure.error, failed.opOcc?.error);
    const rollingBack = renderNotification({ ...failed, opOcc: { ...failed.opOcc!, operationState: 'ROLLING_BACK' } }, subscription);
    assert.equal(rollingBack.error, undefined);
    assert.equal(renderNotification(completed, { ...subscription, id: 's-2' }).id, renderNotification(completed, subscription).id);
    const identifier = renderNotification(created, subscription);
    await assertEtsiSchema('vnflcm-notification', 'VnfIdentifierCreationNotification', identifier);
    assert.equal(identifier.vnfLcmOpOccId, undefined);
  });

  it('a CHANGE_VNFPKG reports modificationsTriggeredByVnfPkgChange, not changedInfo', async () => {
    const change = renderNotification(
      {
        ...completed,
        opOcc: { ...completed.opOcc!, operation: 'CHANGE_VNFPKG', modificationsTriggeredByVnfPkgChange: { vnfdId: 'vnfd-2', vnfProvider: 'Company' } },
      },
      subscription,
    );
    await assertEtsiSchema('vnflcm-notification', 'VnfLcmOperationOccurrenceNotification', change);
    assert.deepEqual(change.modificationsTriggeredByVnfPkgChange, { vnfdId: 'vnfd-2', vnfProvider: 'Company' });
    assert.equal(change.changedInfo, undefined);
  });

  it('a v1 subscription hears the v1 model: changedInfo.vimConnectionInfo and changedExtConnectivity cpConfig as arrays', () => {
    const opOcc = {
      ...completed.opOcc!,
      operation: 'MODIFY_INFO' as const,
      changedInfo: { vimConnectionInfo: { 'vim-a': { vimId: 'v', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3' } } },
      changedExtConnectivity: [
        {
          id: 'ext',
          resourceHandle: { resourceId: 'net' },
          currentVnfExtCpData: [{ cpdId: 'CP1', cpConfig: { c1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
        },
      ],
    };
    const v1 = renderNotification({ ...completed, opOcc }, { ...subscription, apiMajorVersion: 1 });
    assert.deepEqual((v1.changedInfo as { vimConnectionInfo: unknown }).vimConnectionInfo, [
      { id: 'vim-a', vimId: 'v', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3' },
    ]);
    assert.deepEqual((v1.changedExtConnectivity as Array<{ currentVnfExtCpData: Array<{ cpConfig: unknown }> }>)[0]?.currentVnfExtCpData[0]?.cpConfig, [
      { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] },
    ]);
    const v2 = renderNotification({ ...completed, opOcc }, subscription);
    assert.deepEqual(v2.changedInfo, opOcc.changedInfo);
    assert.deepEqual(v2.changedExtConnectivity, opOcc.changedExtConnectivity);
  });

  it('stable ids are UUIDs determined by their key', () => {
    assert.match(stableId('x'), /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(stableId('x'), stableId('x'));
    assert.notEqual(stableId('x'), stableId('y'));
  });
});
