// Grant zones per VDU: which zone a Grant's addResources place each VDU in (by the GrantRequest's
// resource definitions), and the node affinity that puts a Kubernetes VDU's pods in its zone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { vduZonesOf } from '#lib/lcm/grant.ts';
import { withZoneAffinity, ZONE_LABEL } from '#lib/vim/kubernetes/manifests.ts';

describe('grant zones per VDU', () => {
  const grantRequest = {
    addResources: [
      { id: 'VDU1-compute', type: 'COMPUTE', resourceTemplateId: 'VDU1' },
      { id: 'VDU2-compute', type: 'COMPUTE', resourceTemplateId: 'VDU2' },
      { id: 'VDU3-compute', type: 'COMPUTE', resourceTemplateId: 'VDU3' },
      { id: 'internalVL-vl', type: 'VL', resourceTemplateId: 'internalVL' },
    ],
  };
  const zones = [
    { id: 'a', zoneId: 'az-1' },
    { id: 'b', zoneId: 'az-2' },
  ];

  it("maps each VDU to the VIM zone of its resource definition's GrantInfo", () => {
    const grant = {
      zones,
      addResources: [
        { resourceDefinitionId: 'VDU1-compute', zoneId: 'a' },
        { resourceDefinitionId: 'VDU2-compute', zoneId: 'b' },
        { resourceDefinitionId: 'VDU3-compute' },
        { resourceDefinitionId: 'internalVL-vl', zoneId: 'a' },
        { resourceDefinitionId: 'unknown', zoneId: 'a' },
      ],
    };
    assert.deepEqual(vduZonesOf(grant, grantRequest), { VDU1: 'az-1', VDU2: 'az-2' });
  });

  it('ignores a zoneId the Grant does not list, and takes the first zone named for a VDU', () => {
    const grant = {
      zones,
      addResources: [
        { resourceDefinitionId: 'VDU1-compute', zoneId: 'missing' },
        { resourceDefinitionId: 'VDU2-compute', zoneId: 'b' },
      ],
    };
    assert.deepEqual(vduZonesOf(grant, grantRequest), { VDU2: 'az-2' });
    const twice = {
      zones,
      addResources: [
        { resourceDefinitionId: 'x-1', zoneId: 'b' },
        { resourceDefinitionId: 'x-2', zoneId: 'a' },
      ],
    };
    const scale = {
      addResources: [
        { id: 'x-1', type: 'COMPUTE', resourceTemplateId: 'VDU1' },
        { id: 'x-2', type: 'COMPUTE', resourceTemplateId: 'VDU1' },
      ],
    };
    assert.deepEqual(vduZonesOf(twice, scale), { VDU1: 'az-2' });
    assert.deepEqual(vduZonesOf(undefined, grantRequest), {});
    assert.deepEqual(vduZonesOf({ zones }, undefined), {});
  });

  it("adds the zone to every node selector term of the pod spec's own required node affinity", () => {
    const zone = { key: ZONE_LABEL, operator: 'In', values: ['az-2'] };
    assert.deepEqual(withZoneAffinity({ containers: [] }, 'az-2'), {
      containers: [],
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [zone] }] } } },
    });
    const own = {
      affinity: {
        podAntiAffinity: { x: 1 },
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1 }],
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] },
              {
                matchExpressions: [{ key: ZONE_LABEL, operator: 'In', values: ['az-1'] }],
                matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n'] }],
              },
            ],
          },
        },
      },
    };
    const placed = withZoneAffinity(own, 'az-2') as typeof own;
    assert.deepEqual(placed.affinity.podAntiAffinity, { x: 1 });
    assert.deepEqual(placed.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution, [{ weight: 1 }]);
    assert.deepEqual(placed.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms, [
      { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }, zone] },
      { matchExpressions: [zone], matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n'] }] },
    ]);
    assert.equal(
      own.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]?.matchExpressions.length,
      1,
      'the manifest is not changed',
    );
  });
});
