// Fault management's pure rules: which VNFCs an instance has, how a VIM's report becomes an
// alarm, when auto-heal applies, and which FM subscriptions an alarm event reaches.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { autoHealEnabled, faultOf, vnfcsOfInstance } from '#lib/fm/monitor.ts';
import { alarmEvent, fmSubscriptionMatches } from '#lib/fm/notifications.ts';
import type { AlarmRecord } from '#lib/fm/model.ts';
import type { VnfInstanceRecord } from '#lib/sol/model.ts';

const instance = {
  id: 'vnf-1',
  tenantId: 't',
  vnfdId: 'd',
  vnfProvider: 'p',
  vnfProductName: 'n',
  vnfSoftwareVersion: '1',
  vnfdVersion: '1',
  vnfPkgId: 'k',
  instantiationState: 'INSTANTIATED',
  vnfConfigurableProperties: { isAutohealEnabled: true },
  instantiatedVnfInfo: {
    flavourId: 'simple',
    vnfState: 'STARTED',
    vnfcResourceInfo: [
      { id: 'vnfc-a', vduId: 'VDU1', computeResource: { resourceId: 'server-a', vimLevelResourceType: 'OS::Nova::Server' } },
      { id: 'pod-b', vduId: 'VDU2', computeResource: { resourceId: 'pod-b' } },
    ],
    vnfcInfo: [{ id: 'VDU1-vnfc-a', vduId: 'VDU1', vnfcResourceInfoId: 'vnfc-a', vnfcState: 'STARTED' }],
  },
} as unknown as VnfInstanceRecord;

describe('fault management rules', () => {
  it("lists an instance's VNFCs with their VIM resources and vnfcInfo ids", () => {
    assert.deepEqual(vnfcsOfInstance(instance), [
      { id: 'vnfc-a', vduId: 'VDU1', resourceId: 'server-a', vimLevelResourceType: 'OS::Nova::Server', vnfcInfoIds: ['VDU1-vnfc-a'] },
      { id: 'pod-b', vduId: 'VDU2', resourceId: 'pod-b', vnfcInfoIds: [] },
    ]);
  });

  it("turns a VIM's report into a fault in the driver's words", () => {
    const fault = faultOf(instance, { vduId: 'VDU1', resourceId: 'server-a', healthy: false, reason: 'SHUTOFF' } as never, {
      severity: 'MAJOR',
      eventType: 'EQUIPMENT_ALARM',
      probableCause: 'Server SHUTOFF',
      faultType: 'VNFC_FAILURE',
    });
    assert.equal(fault.source, 'health-check');
    assert.equal(fault.probableCause, 'Server SHUTOFF');
    assert.equal(fault.resourceId, 'server-a');
  });

  it('auto-heals only when the instance enables it', () => {
    assert.equal(autoHealEnabled(instance), true);
    assert.equal(autoHealEnabled({ ...instance, vnfConfigurableProperties: {} } as VnfInstanceRecord), false);
    assert.equal(autoHealEnabled({ ...instance, vnfConfigurableProperties: { isAutohealEnabled: 'true' } } as unknown as VnfInstanceRecord), false);
  });

  it('matches a cleared alarm by the severity it was raised with', () => {
    const alarm = {
      id: 'alarm-1',
      managedObjectId: 'vnf-1',
      raisedSeverity: 'CRITICAL',
      perceivedSeverity: 'CLEARED',
      eventType: 'EQUIPMENT_ALARM',
      probableCause: 'Server SHUTOFF',
      rootCauseFaultyResource: { faultyResourceType: 'COMPUTE' },
      instance: { vnfdId: 'd', vnfProvider: 'p', vnfProductName: 'n', vnfSoftwareVersion: '1', vnfdVersion: '1' },
    } as unknown as AlarmRecord;
    const cleared = alarmEvent(alarm, 'AlarmClearedNotification', '2026-12-02T00:00:00Z');
    assert.equal(fmSubscriptionMatches({ perceivedSeverities: ['CRITICAL'] } as never, cleared), true);
    assert.equal(fmSubscriptionMatches({ perceivedSeverities: ['MINOR'] } as never, cleared), false);
    assert.equal(fmSubscriptionMatches({ notificationTypes: ['AlarmNotification'] } as never, cleared), false);
    assert.equal(fmSubscriptionMatches({ faultyResourceTypes: ['COMPUTE'], eventTypes: ['EQUIPMENT_ALARM'] } as never, cleared), true);
    assert.equal(fmSubscriptionMatches(undefined, cleared), true);
  });
});
