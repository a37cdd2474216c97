// What performance management measures of an instance: the VIM with the credentials its own
// connection has now (a MODIFY_INFO may have replaced those its last operation recorded), and the
// names reports give its VNFCs and connection points.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { currentVim, subObjectsOf, vnfcNameOf } from '#lib/pm/targets.ts';
import type { VnfInstanceRecord } from '#lib/sol/model.ts';

const vim = { connectionId: 'vim1', vimId: 'vim1', vimType: 'kubernetes', interfaceInfo: { endpoint: 'https://old' }, accessSecret: 'secret-old' };
const instance = {
  id: 'vnf-1',
  vimResources: { vim, driverState: {} },
  instantiatedVnfInfo: {
    vnfcResourceInfo: [
      {
        id: 'res-1',
        vduId: 'VDU1',
        computeResource: { resourceId: 'server-1' },
        vnfcCpInfo: [
          { id: 'cp-ext', cpdId: 'VDU1_CP1', vnfExtCpId: 'ext-1' },
          { id: 'cp-int', cpdId: 'VDU1_CP2' },
        ],
      },
    ],
    vnfcInfo: [{ id: 'vnfc-1', vnfcResourceInfoId: 'res-1' }],
  },
} as unknown as VnfInstanceRecord;

describe('PM targets', () => {
  it('measures with the credentials and endpoint the instance’s own connection has now', () => {
    assert.deepEqual(currentVim(instance), vim, 'nothing replaced: the recorded VIM');
    const modified = {
      ...instance,
      vimAccessSecrets: { vim1: 'secret-new' },
      vimConnectionInfo: { vim1: { vimType: 'kubernetes', interfaceInfo: { endpoint: 'https://new' } } },
    } as VnfInstanceRecord;
    assert.deepEqual(currentVim(modified), { ...vim, accessSecret: 'secret-new', interfaceInfo: { endpoint: 'https://new' } });
    // A registered VIM (no secret of the instance's own for the connection) stays as recorded.
    assert.deepEqual(currentVim({ ...instance, vimAccessSecrets: { other: 'x' } } as VnfInstanceRecord), vim);
  });

  it('names VNFCs by their vnfcInfo id, internal CPs by their id, external CPs by the external CP', () => {
    assert.equal(vnfcNameOf(instance, 'res-1'), 'vnfc-1');
    assert.equal(vnfcNameOf(instance, 'res-unknown'), 'res-unknown');
    assert.deepEqual([...subObjectsOf(instance, 'vnfc')], ['vnfc-1']);
    assert.deepEqual([...subObjectsOf(instance, 'intCp')], ['cp-int']);
    assert.deepEqual([...subObjectsOf(instance, 'extCp')], ['ext-1']);
  });
});
