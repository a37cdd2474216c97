// The reconciliation of package instance counts, with the real package and instance stores on the
// template's tables in the local DynamoDB: a count no instance backs (a process died between taking
// a package into use and writing its instance) goes back to zero once no take it counts can still be
// followed by its write; a count some instance backs, a package taken since the sweep read it, or a
// take too recent, stays as it is.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { reconcile } from '#lib/lcm/recovery.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { VnfInstanceRecord } from '#lib/sol/model.ts';
import { anyInstanceOfPackage, clearUnbackedCount, countedPackages } from '#lib/store/package-usage.ts';
import { DynamoVnfPackageStore, type VnfPackageRecord } from '#lib/store/packages.ts';
import { DynamoVnfInstanceStore } from '#lib/store/vnf-instances.ts';
import { startTemplateTables } from '../support/template-tables.ts';

const packages = new DynamoVnfPackageStore('VnfPackagesTable');
const instances = new DynamoVnfInstanceStore('VnfInstancesTable');

let made = 0;
async function pkg(vnfdId: string, extra: Partial<VnfPackageRecord> = {}): Promise<string> {
  const id = `pkg-${++made}`;
  await packages.put({
    id,
    tenantId: 't1',
    createdAt: `2026-12-01T00:00:${String(made).padStart(2, '0')}Z`,
    onboardingState: 'ONBOARDED',
    operationalState: 'ENABLED',
    usageState: 'NOT_IN_USE',
    vnfdId,
    revision: 1,
    ...extra,
  });
  return id;
}

async function instanceOf(vnfdId: string, vnfPkgId: string): Promise<void> {
  const id = `vnf-${++made}`;
  const createdAt = new Date(Date.UTC(2026, 11, 1, 0, 0, 0, made)).toISOString();
  await instances.create({
    id,
    tenantId: 't1',
    createdAt,
    createdSeq: `${createdAt}#${id}`,
    vnfdId,
    vnfPkgId,
    vnfProvider: 'Company',
    vnfProductName: 'Sample',
    vnfSoftwareVersion: '1.0',
    vnfdVersion: '1.0',
    instantiationState: 'NOT_INSTANTIATED',
    revision: 1,
  } as VnfInstanceRecord);
}

/** The sweep's ports this part of it uses, as lib/deps.ts recoveryDeps wires them; nothing else is in flight. */
const deps = {
  instances,
  packages,
  opOccs: { listInFlight: async () => [] },
  now: () => new Date().toISOString(),
  packageUsage: {
    counted: () => countedPackages('VnfPackagesTable'),
    anyInstanceOf: (vnfdId: string, vnfPkgId: string) => anyInstanceOfPackage(vnfdId, vnfPkgId, 'VnfInstancesTable'),
    clear: (id: string, seen: { instanceCount: number; takenAt?: string }) => clearUnbackedCount(id, seen, 'VnfPackagesTable'),
  },
} as unknown as CoreDeps;
const clear = (id: string, seen: { instanceCount: number; takenAt?: string }) => clearUnbackedCount(id, seen, 'VnfPackagesTable');

const usage = async (id: string) => {
  const record = await packages.get(id);
  return [record?.usageState, record?.instanceCount];
};

describe('package usage reconciliation', () => {
  let stop: () => Promise<void>;
  before(async () => {
    stop = await startTemplateTables(['VnfPackagesTable', 'VnfInstancesTable']);
  });
  after(() => stop());

  it('zeroes a count no instance backs, once the takes it counts are over, and nothing else', async () => {
    // Taken twice, one instance written: the count is one too high, but an instance uses the package.
    const used = await pkg('vnfd-a');
    assert.ok(await packages.acquireUse(used));
    assert.ok(await packages.acquireUse(used));
    await instanceOf('vnfd-a', used);
    // Taken, its instance never written (the process died in between).
    const leaked = await pkg('vnfd-b');
    assert.ok(await packages.acquireUse(leaked));
    // Counted by a version that recorded no take time.
    const old = await pkg('vnfd-c', { instanceCount: 1, usageState: 'IN_USE' });
    // Two packages of one VNFD: the second's only instance comes after 150 of the first, past the first page.
    const busy = await pkg('vnfd-d');
    const paged = await pkg('vnfd-d');
    for (let i = 0; i < 150; i += 1) {
      assert.ok(await packages.acquireUse(busy));
      await instanceOf('vnfd-d', busy);
    }
    assert.ok(await packages.acquireUse(paged));
    await instanceOf('vnfd-d', paged);
    // And a package of the same VNFD as `used` that none of its instances was created from.
    const sibling = await pkg('vnfd-a');
    assert.ok(await packages.acquireUse(sibling));

    // A sweep that cannot rule out a take still under way (all were made after its bound) changes nothing.
    const early = await reconcile(deps, { startedBefore: '2000-01-01T00:00:00Z' });
    assert.deepEqual(early.usage, [old]);
    assert.deepEqual(await usage(leaked), ['IN_USE', 1]);

    const report = await reconcile(deps, { startedBefore: new Date(Date.now() + 1000).toISOString() });
    assert.deepEqual(report.usage.sort(), [leaked, sibling].sort());
    assert.deepEqual(await usage(leaked), ['NOT_IN_USE', 0]);
    assert.deepEqual(await usage(sibling), ['NOT_IN_USE', 0]);
    assert.deepEqual(await usage(old), ['NOT_IN_USE', 0]);
    assert.deepEqual(await usage(used), ['IN_USE', 2]);
    assert.deepEqual(await usage(busy), ['IN_USE', 150]);
    assert.deepEqual(await usage(paged), ['IN_USE', 1]);
    // A package that counts none is left alone, and a second sweep finds nothing more.
    assert.deepEqual((await reconcile(deps, { startedBefore: new Date(Date.now() + 1000).toISOString() })).usage, []);

    // Taken again after a release: the count goes on from zero as before.
    assert.ok(await packages.acquireUse(leaked));
    assert.deepEqual(await usage(leaked), ['IN_USE', 1]);
  });

  it('does not zero a count that changed since the sweep read it', async () => {
    const id = await pkg('vnfd-e');
    assert.ok(await packages.acquireUse(id));
    const seen = await packages.get(id);
    assert.ok(seen?.takenAt);
    // Taken again in between: the correction's condition fails.
    assert.ok(await packages.acquireUse(id));
    assert.equal(await clear(id, { instanceCount: 1, takenAt: seen.takenAt }), false);
    assert.deepEqual(await usage(id), ['IN_USE', 2]);
    // Released in between (same take time, another count): it fails too.
    await packages.releaseUse(id);
    const now = await packages.get(id);
    assert.equal(await clear(id, { instanceCount: 2, takenAt: now?.takenAt }), false);
    assert.equal(await clear(id, { instanceCount: 1, takenAt: now?.takenAt }), true);
    assert.deepEqual(await usage(id), ['NOT_IN_USE', 0]);
    // A release still under way when the count was zeroed finds nothing to release.
    await packages.releaseUse(id);
    assert.deepEqual(await usage(id), ['NOT_IN_USE', 0]);
    // A package gone meanwhile is no correction.
    assert.equal(await clear('no-such-package', { instanceCount: 1 }), false);
  });
});
