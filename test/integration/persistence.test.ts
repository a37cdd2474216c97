// The local runtime keeps every record across restarts with the same VNFM_DATA_DIR, and stops
// cleanly on SIGINT and SIGTERM.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { client, newDataDir, seedPackage, settle, startVnfm } from '../support/runtime.ts';

it('keeps instances and op occurrences across a restart, and exits 0 on SIGTERM and SIGINT', async () => {
  const dataDir = newDataDir();
  const first = await startVnfm({ dataDir });
  let call = client(first);
  const pkg = await seedPackage(first);
  const ids: string[] = [];
  for (const name of ['kept-1', 'kept-2']) {
    const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: pkg.vnfdId, vnfInstanceName: name } });
    assert.equal(reply.status, 201);
    ids.push((reply.body as { id: string }).id);
  }
  const patched = await call('PATCH', `/vnflcm/v2/vnf_instances/${ids[0]}`, { body: { vnfInstanceDescription: 'changed' } });
  assert.equal(patched.status, 202);
  await settle(first);
  const opOccPath = new URL(patched.headers.get('location') ?? '').pathname;
  assert.equal(await first.stop('SIGTERM'), 0);

  const second = await startVnfm({ dataDir });
  call = client(second);
  try {
    const list = (await call('GET', '/vnflcm/v2/vnf_instances')).body as Array<{ id: string; vnfInstanceName: string }>;
    assert.deepEqual(list.map((i) => i.id).sort(), [...ids].sort());
    const instance = (await call('GET', `/vnflcm/v2/vnf_instances/${ids[0]}`)).body as { vnfInstanceDescription: string };
    assert.equal(instance.vnfInstanceDescription, 'changed');
    const opOcc = await call('GET', opOccPath);
    assert.equal(opOcc.status, 200);
    assert.equal((opOcc.body as { operationState: string }).operationState, 'COMPLETED');
    // Records written before the restart still take part in new operations.
    assert.equal((await call('PATCH', `/vnflcm/v2/vnf_instances/${ids[1]}`, { body: { vnfInstanceName: 'again' } })).status, 202);
    await settle(second);
  } finally {
    assert.equal(await second.stop('SIGINT'), 0);
  }
});
