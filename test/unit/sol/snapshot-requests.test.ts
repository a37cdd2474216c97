// The VNF snapshot request bodies (SOL003 5.5.2.20, 5.5.2.21, 5.5.2.25): what is accepted and what is a 400.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createVnfSnapshotInfoRequest, createVnfSnapshotRequest, revertToVnfSnapshotRequest } from '#lib/sol/requests.ts';

describe('VNF snapshot requests', () => {
  it('CreateVnfSnapshotInfoRequest: empty, or a package extraction with both attributes', () => {
    assert.ok(createVnfSnapshotInfoRequest.safeParse({}).success);
    assert.ok(createVnfSnapshotInfoRequest.safeParse({ vnfSnapshotPkgId: 'p', vnfSnapshot: {} }).success);
    assert.ok(!createVnfSnapshotInfoRequest.safeParse({ vnfSnapshotPkgId: 'p' }).success);
    assert.ok(!createVnfSnapshotInfoRequest.safeParse({ vnfSnapshot: {} }).success);
    assert.ok(!createVnfSnapshotInfoRequest.safeParse({ other: 1 }).success);
  });

  it('CreateVnfSnapshotRequest: the resource to fill is required', () => {
    assert.ok(createVnfSnapshotRequest.safeParse({ vnfSnapshotInfoId: 's', vnfcInstanceId: 'v', userDefinedData: { a: 1 }, additionalParams: {} }).success);
    assert.ok(!createVnfSnapshotRequest.safeParse({}).success);
    assert.ok(!createVnfSnapshotRequest.safeParse({ vnfSnapshotInfoId: '' }).success);
    assert.ok(!createVnfSnapshotRequest.safeParse({ vnfSnapshotResId: 's' }).success);
  });

  it('RevertToVnfSnapshotRequest: the whole VNF, or one VNFC with the VNFC snapshot it goes back to', () => {
    assert.ok(revertToVnfSnapshotRequest.safeParse({ vnfSnapshotInfoId: 's' }).success);
    assert.ok(revertToVnfSnapshotRequest.safeParse({ vnfSnapshotInfoId: 's', vnfcInstanceId: 'v', vnfcSnapshotInfoId: 'c' }).success);
    assert.ok(!revertToVnfSnapshotRequest.safeParse({ vnfSnapshotInfoId: 's', vnfcInstanceId: 'v' }).success);
    assert.ok(!revertToVnfSnapshotRequest.safeParse({ vnfSnapshotInfoId: 's', vnfcSnapshotInfoId: 'c' }).success);
    assert.ok(!revertToVnfSnapshotRequest.safeParse({ vnfcInstanceId: 'v', vnfcSnapshotInfoId: 'c' }).success);
  });
});
