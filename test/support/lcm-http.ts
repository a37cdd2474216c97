// Test support: the LCM steps an NFVO takes over HTTP, with every op occ and instance it reads
// validated against the ETSI schemas: start a task (202 + Location), wait until the product is
// idle and check the state the op occ ended in, read an instance, terminate and delete one.
import assert from 'node:assert/strict';
import { assertEtsiResponse } from './etsi.ts';
import { buildCsar, type SamplePackageName } from './csar-builder.ts';
import { settle, type client, type LocalVnfm } from './runtime.ts';

/** An InstantiateVnfRequest of the OpenStack sample VNF (openstack-vnf-v1/v2): flavour simple, VDU1_CP1 on the simulator's "public" network. */
export const OPENSTACK_SAMPLE_INSTANTIATE = {
  flavourId: 'simple',
  extVirtualLinks: [
    {
      id: 'ext-public',
      resourceId: 'public',
      extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { VDU1_CP1_1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
    },
  ],
};

export function lcmSteps(vnfm: LocalVnfm, call: ReturnType<typeof client>) {
  /** POSTs a task; returns the path of its op occ. */
  const operate = async (path: string, body: unknown): Promise<string> => {
    const reply = await call('POST', path, { body });
    assert.equal(reply.status, 202, reply.text);
    return new URL(reply.headers.get('location') ?? '').pathname;
  };
  /** Waits until nothing runs, then checks the op occ's state. */
  const ended = async (path: string, state: string): Promise<Record<string, unknown>> => {
    await settle(vnfm);
    const reply = await call('GET', path);
    const occ = reply.body as Record<string, unknown>;
    assert.equal(occ.operationState, state, JSON.stringify(occ));
    await assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs/{vnfLcmOpOccId}', 'get', 200, occ);
    return occ;
  };
  const instance = async <T>(id: string): Promise<T> => {
    const reply = await call('GET', `/vnflcm/v2/vnf_instances/${id}`);
    await assertEtsiResponse('vnflcm', '/vnf_instances/{vnfInstanceId}', 'get', 200, reply.body);
    return reply.body as T;
  };
  const usage = async (packageId: string): Promise<string> =>
    ((await call('GET', `/vnfpkgm/v1/vnf_packages/${packageId}`)).body as { usageState: string }).usageState;
  const terminateAndDelete = async (id: string): Promise<void> => {
    await ended(await operate(`/vnflcm/v2/vnf_instances/${id}/terminate`, { terminationType: 'FORCEFUL' }), 'COMPLETED');
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  };
  /** Uploads sample packages and waits until they are onboarded; returns their package ids by name. */
  const onboard = async (names: readonly SamplePackageName[]): Promise<Record<string, string>> => {
    const ids: Record<string, string> = {};
    for (const name of names) {
      const id = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
      await call('PUT', `/vnfpkgm/v1/vnf_packages/${id}/package_content`, { raw: await buildCsar(name), headers: { 'Content-Type': 'application/zip' } });
      ids[name] = id;
    }
    await settle(vnfm);
    return ids;
  };
  return { operate, ended, instance, usage, terminateAndDelete, onboard };
}
