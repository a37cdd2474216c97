// Tests of what the OpenStack simulator offers the next LCM operations and performance
// management, over HTTP as a client sees them: Nova's createImage (per microversion) and server
// diagnostics with the load a test sets under /_sim/, os-stop/os-start conflicts, and Cinder
// snapshots with volumes made from them.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { login, send, type Session } from '#local/openstack/client.ts';
import { startOpenStackSimulator, type OpenStackSimulator } from '#local/openstack/simulator.ts';

// JSON bodies are checked field by field below; their full shapes are the simulator's business.
type J = any;

const TIME_SCALE = 0.01;

/** Tests that look at a state in passing use a larger timeScale, so the state lasts long enough to be seen. */
async function start(t: TestContext, timeScale = TIME_SCALE): Promise<{ sim: OpenStackSimulator; s: Session }> {
  const sim = await startOpenStackSimulator({ timeScale });
  t.after(() => sim.close());
  return { sim, s: await login(sim.authUrl, sim.credentials) };
}

async function activeServer(sim: OpenStackSimulator, s: Session, name: string, networks = 1): Promise<string> {
  const nets: J[] = [];
  for (let n = 0; n < networks; n++) {
    const net = await s.request<J>('network', '/v2.0/networks', { method: 'POST', body: { network: { name: `${name}-net${n}` } } });
    await s.request('network', '/v2.0/subnets', {
      method: 'POST',
      body: { subnet: { network_id: net.body.network.id, cidr: `10.${20 + n}.0.0/24`, ip_version: 4 } },
    });
    nets.push({ uuid: net.body.network.id });
  }
  const image = (await s.request<J>('image', '/v2/images?name=cirros-0.5.2-x86_64-disk')).body.images[0].id;
  const created = await s.request<J>('compute', '/servers', { method: 'POST', body: { server: { name, imageRef: image, flavorRef: '2', networks: nets } } });
  assert.equal(created.status, 202, created.text);
  await sim.settled();
  return created.body.server.id;
}

const action = (s: Session, id: string, body: unknown, microversion?: string) =>
  s.request<J>('compute', `/servers/${id}/action`, {
    method: 'POST',
    body,
    ...(microversion ? { headers: { 'openstack-api-version': `compute ${microversion}` } } : {}),
  });
const diagnostics = (s: Session, id: string, microversion = '2.48') =>
  s.request<J>('compute', `/servers/${id}/diagnostics`, { headers: { 'openstack-api-version': `compute ${microversion}` } });
const setLoad = (sim: OpenStackSimulator, id: string, body: unknown) => send<J>(`${sim.url}/_sim/servers/${id}/load`, { method: 'POST', body });

// ---------------------------------------------------------------------------------------------
// Nova createImage

test('nova createImage: 202 with image_id at 2.45+, a Location header before; queued -> saving -> active through the task states', async (t) => {
  const { sim, s } = await start(t, 0.3);
  const id = await activeServer(sim, s, 'vm1');
  const base = (await s.request<J>('image', '/v2/images?name=cirros-0.5.2-x86_64-disk')).body.images[0];

  const snap = await action(s, id, { createImage: { name: 'vm1-snap', metadata: { purpose: 'backup' } } }, '2.45');
  assert.equal(snap.status, 202, snap.text);
  assert.equal(snap.headers.get('location'), null);
  const imageId = snap.body.image_id;
  assert.match(imageId, /^[0-9a-f-]{36}$/);
  const queued = (await s.request<J>('image', `/v2/images/${imageId}`)).body;
  assert.equal(queued.status, 'queued');
  assert.equal(queued.disk_format, null, 'Nova leaves the formats to the driver');
  assert.equal(queued.owner, s.projectId);
  assert.equal(queued.visibility, 'private');
  assert.equal(queued.image_type, 'snapshot');
  assert.equal(queued.instance_uuid, id);
  assert.equal(queued.base_image_ref, base.id);
  assert.equal(queued.purpose, 'backup');
  assert.equal(queued.hw_rng_model, 'virtio', "inherited from the server's image");
  assert.match((await s.request<J>('compute', `/servers/${id}`)).body.server['OS-EXT-STS:task_state'], /^image_(snapshot|pending_upload)$/);

  // Another snapshot while one runs is refused as Nova does.
  const busy = await action(s, id, { createImage: { name: 'again' } }, '2.45');
  assert.equal(busy.status, 409);
  assert.match(busy.body.conflictingRequest.message, /^Cannot 'createImage' instance .* while it is in task_state image_(snapshot|pending_upload|uploading)$/);

  const seen = new Set<string>();
  const taskStates = new Set<string>();
  while (true) {
    const image = (await s.request<J>('image', `/v2/images/${imageId}`)).body;
    seen.add(image.status);
    taskStates.add(String((await s.request<J>('compute', `/servers/${id}`)).body.server['OS-EXT-STS:task_state']));
    if (image.status === 'active') break;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  assert.ok(seen.has('saving'), `saw ${[...seen].join(', ')}`);
  assert.ok(taskStates.has('image_uploading') || taskStates.has('image_pending_upload'), `saw task states ${[...taskStates].join(', ')}`);
  await sim.settled();
  const active = (await s.request<J>('image', `/v2/images/${imageId}`)).body;
  assert.equal(active.disk_format, 'qcow2');
  assert.equal(active.container_format, 'bare');
  assert.ok(active.size > 0);
  assert.match(active.checksum, /^[0-9a-f]{32}$/);
  const server = (await s.request<J>('compute', `/servers/${id}`)).body.server;
  assert.equal(server['OS-EXT-STS:task_state'], null);
  assert.equal(server.status, 'ACTIVE');

  // Before 2.45: an empty body and the image's Glance URL in Location.
  const old = await action(s, id, { createImage: { name: 'vm1-old' } }, '2.44');
  assert.equal(old.status, 202);
  assert.equal(old.text, '');
  const location = old.headers.get('location') ?? '';
  assert.match(location, new RegExp(`^${sim.url}/image/images/[0-9a-f-]{36}$`));
  await sim.settled();
  assert.equal((await s.request<J>('image', `/v2/images/${location.split('/').pop()}`)).body.status, 'active');

  // A stopped server can be snapshotted; a bad body is 400; a snapshot can boot a new server.
  assert.equal((await action(s, id, { createImage: {} })).status, 400);
  assert.equal((await action(s, id, { 'os-stop': null })).status, 202);
  await sim.settled();
  assert.equal((await action(s, id, { createImage: { name: 'stopped' } }, '2.45')).status, 202);
  await sim.settled();
  const booted = await s.request<J>('compute', '/servers', {
    method: 'POST',
    body: { server: { name: 'from-snap', imageRef: imageId, flavorRef: '2', networks: 'none' } },
  });
  assert.equal(booted.status, 202, booted.text);
  await sim.settled();
  assert.equal((await s.request<J>('compute', `/servers/${booted.body.server.id}`)).body.server.status, 'ACTIVE');
});

test('nova createImage of a volume-backed server: a forced Cinder snapshot per volume and an image that maps them', async (t) => {
  const { sim, s } = await start(t);
  const image = (await s.request<J>('image', '/v2/images?name=cirros-0.5.2-x86_64-disk')).body.images[0].id;
  const created = await s.request<J>('compute', '/servers', {
    method: 'POST',
    body: {
      server: {
        name: 'bfv',
        flavorRef: '2',
        networks: 'none',
        block_device_mapping_v2: [{ uuid: image, source_type: 'image', destination_type: 'volume', volume_size: 1, boot_index: 0 }],
      },
    },
  });
  assert.equal(created.status, 202, created.text);
  await sim.settled();
  const id = created.body.server.id;
  const snap = await action(s, id, { createImage: { name: 'bfv-snap' } }, '2.45');
  assert.equal(snap.status, 202, snap.text);
  await sim.settled();
  const img = (await s.request<J>('image', `/v2/images/${snap.body.image_id}`)).body;
  assert.equal(img.status, 'active');
  assert.equal(img.size, 0);
  assert.equal(img.bdm_v2, 'True');
  const [mapping] = JSON.parse(img.block_device_mapping);
  assert.equal(mapping.source_type, 'snapshot');
  assert.equal(mapping.boot_index, 0);
  const snapshot = (await s.request<J>('volumev3', `/snapshots/${mapping.snapshot_id}`)).body.snapshot;
  assert.equal(snapshot.status, 'available');
  assert.equal(snapshot.name, 'snapshot for bfv-snap');

  // Booting from that image makes a new volume from the snapshot and boots from it.
  const restored = await s.request<J>('compute', '/servers', {
    method: 'POST',
    body: { server: { name: 'restored', imageRef: snap.body.image_id, flavorRef: '2', networks: 'none' } },
  });
  assert.equal(restored.status, 202, restored.text);
  await sim.settled();
  const server = (await s.request<J>('compute', `/servers/${restored.body.server.id}`)).body.server;
  assert.equal(server.status, 'ACTIVE');
  assert.equal(server.image, '', 'volume-backed');
  const [attached] = server['os-extended-volumes:volumes_attached'];
  const volume = (await s.request<J>('volumev3', `/volumes/${attached.id}`)).body.volume;
  assert.equal(volume.snapshot_id, snapshot.id);
  assert.equal(volume.attachments[0].device, '/dev/vda');
});

// ---------------------------------------------------------------------------------------------
// Nova os-stop / os-start, as OPERATE will use them

test('nova os-stop/os-start: powering-off/powering-on task states, 409 when already stopped or started or busy', async (t) => {
  const { sim, s } = await start(t, 0.3);
  const id = await activeServer(sim, s, 'op');
  const started = await action(s, id, { 'os-start': null });
  assert.equal(started.status, 409);
  assert.match(started.body.conflictingRequest.message, /^Cannot 'start' instance .* while it is in vm_state active$/);
  assert.equal((await action(s, id, { 'os-stop': null })).status, 202);
  const stopping = (await s.request<J>('compute', `/servers/${id}`)).body.server;
  assert.equal(stopping['OS-EXT-STS:task_state'], 'powering-off');
  assert.equal(stopping.status, 'ACTIVE', 'the status changes when the guest is off');
  const during = await action(s, id, { 'os-stop': null });
  assert.equal(during.status, 409);
  assert.match(during.body.conflictingRequest.message, /while it is in task_state powering-off$/);
  await sim.settled();
  const stopped = (await s.request<J>('compute', `/servers/${id}`)).body.server;
  assert.equal(stopped.status, 'SHUTOFF');
  assert.equal(stopped['OS-EXT-STS:power_state'], 4);
  assert.equal((await action(s, id, { 'os-start': null })).status, 202);
  assert.equal((await s.request<J>('compute', `/servers/${id}`)).body.server['OS-EXT-STS:task_state'], 'powering-on');
  await sim.settled();
  assert.equal((await s.request<J>('compute', `/servers/${id}`)).body.server.status, 'ACTIVE');
});

// ---------------------------------------------------------------------------------------------
// Nova diagnostics and the load control

test('nova diagnostics: the 2.48 shape with plausible defaults; counters grow with simulated time and stop while the server is off', async (t) => {
  const { sim, s } = await start(t);
  const id = await activeServer(sim, s, 'pm', 2);
  const first = await diagnostics(s, id);
  assert.equal(first.status, 200, first.text);
  const d = first.body;
  assert.equal(d.state, 'running');
  assert.equal(d.driver, 'libvirt');
  assert.equal(d.num_cpus, 1);
  assert.equal(d.num_nics, 2);
  assert.equal(d.num_disks, 1);
  assert.equal(d.memory_details.maximum, 2048);
  assert.ok(d.memory_details.used > 0 && d.memory_details.used < 2048);
  assert.equal(d.cpu_details.length, 1);
  assert.equal(d.cpu_details[0].id, 0);
  assert.ok(d.cpu_details[0].utilisation > 0);
  const ports = (await s.request<J>('network', `/v2.0/ports?device_id=${id}`)).body.ports;
  assert.deepEqual(d.nic_details.map((n: J) => n.mac_address).sort(), ports.map((p: J) => p.mac_address).sort());
  for (const key of ['rx_octets', 'tx_octets', 'rx_packets', 'tx_packets', 'rx_errors', 'tx_errors', 'rx_drop', 'tx_drop'])
    assert.equal(typeof d.nic_details[0][key], 'number', key);
  for (const key of ['read_bytes', 'write_bytes', 'read_requests', 'write_requests', 'errors_count'])
    assert.equal(typeof d.disk_details[0][key], 'number', key);

  // Simulated time is moved on by the control, not waited for.
  assert.equal((await setLoad(sim, id, { advanceSeconds: 5 })).status, 200);
  const later = (await diagnostics(s, id)).body;
  assert.ok(later.nic_details[0].rx_octets > d.nic_details[0].rx_octets, 'traffic flows while the guest runs');
  assert.ok(later.cpu_details[0].time > d.cpu_details[0].time);
  assert.ok(later.uptime >= 5, `5 simulated seconds passed (uptime ${later.uptime})`);

  // Non-admins are refused; before 2.48 libvirt's own keys.
  const legacy = await diagnostics(s, id, '2.47');
  assert.equal(legacy.status, 200);
  assert.equal(legacy.body.memory, 2048 * 1024);
  assert.equal(typeof legacy.body.cpu0_time, 'number');
  assert.equal(typeof legacy.body.vda_read, 'number');
  assert.ok(Object.keys(legacy.body).some((k) => /^tap[0-9a-f-]{11}_rx$/.test(k)));
  const demo = await login(sim.authUrl, { ...sim.credentials, username: 'demo', project: 'demo' });
  assert.equal((await demo.request<J>('compute', `/servers/${id}/diagnostics`)).status, 404, 'not even visible to another project');

  // A long run before the stop, so that the restart's fresh uptime is told apart from it.
  assert.equal((await setLoad(sim, id, { advanceSeconds: 1000 })).status, 200);
  assert.equal((await action(s, id, { 'os-stop': null })).status, 202);
  await sim.settled();
  const off = await diagnostics(s, id);
  assert.equal(off.status, 409);
  assert.match(off.body.conflictingRequest.message, /^Cannot 'get_diagnostics' instance .* while it is in power state shutdown$/);
  const frozen = (await send<J>(`${sim.url}/_sim/servers/${id}/load`)).body;
  assert.equal((await setLoad(sim, id, { advanceSeconds: 30 })).status, 200);
  const stillFrozen = (await send<J>(`${sim.url}/_sim/servers/${id}/load`)).body;
  assert.equal(stillFrozen.running, false);
  assert.deepEqual(stillFrozen.nics, frozen.nics, 'no traffic while the server is off');
  assert.equal((await action(s, id, { 'os-start': null })).status, 202);
  await sim.settled();
  const again = (await diagnostics(s, id)).body;
  assert.ok(again.nic_details[0].rx_octets >= later.nic_details[0].rx_octets, 'counters never go down');
  assert.ok(again.uptime < 1000, `uptime restarts with the guest (${again.uptime})`);
});

test("control: a server's load (CPU, memory, counters, rates, advanceSeconds) is what diagnostics report; counters only grow", async (t) => {
  const { sim, s } = await start(t);
  const id = await activeServer(sim, s, 'loaded');
  const mac = (await diagnostics(s, id)).body.nic_details[0].mac_address;

  const set = await setLoad(sim, id, {
    cpuUtilisation: 85,
    memoryUsedMb: 1500,
    nic: { port: mac, rxOctets: 1_000_000, txOctets: 2_000_000, rxOctetsPerSecond: 0, txOctetsPerSecond: 0, rxPacketsPerSecond: 0, txPacketsPerSecond: 0 },
    disk: { device: 'vda', readBytes: 5_000_000, readBytesPerSecond: 0, writeBytesPerSecond: 1000, writeRequestsPerSecond: 0, readRequestsPerSecond: 0 },
  });
  assert.equal(set.status, 200, set.text);
  assert.equal(set.body.cpuUtilisation, 85);
  const d = (await diagnostics(s, id)).body;
  assert.equal(d.cpu_details[0].utilisation, 85);
  assert.equal(d.memory_details.used, 1500);
  assert.equal(d.nic_details[0].rx_octets, 1_000_000);
  assert.equal(d.nic_details[0].tx_octets, 2_000_000);
  assert.equal(d.disk_details[0].read_bytes, 5_000_000);

  // A minute of simulated time at once: writes at 1000 B/s add 60,000 bytes; CPU time grows by 85% of 60 s.
  // Real time passes between the reads too; it is bounded by what the clock says.
  const startedAt = performance.now();
  const before = (await diagnostics(s, id)).body;
  assert.equal((await setLoad(sim, id, { advanceSeconds: 60 })).status, 200);
  const after = (await diagnostics(s, id)).body;
  const passed = (performance.now() - startedAt) / 1000 / TIME_SCALE;
  const written = after.disk_details[0].write_bytes - before.disk_details[0].write_bytes;
  assert.ok(written >= 60_000 && written <= 1000 * (60 + passed) + 1, `wrote ${written} bytes in 60 + ${passed} simulated seconds`);
  const cpu = (after.cpu_details[0].time - before.cpu_details[0].time) / 1e9;
  assert.ok(cpu >= 51 && cpu <= 0.85 * (60 + passed) + 0.01, `${cpu} s of CPU in 60 + ${passed} simulated seconds`);
  assert.equal(after.nic_details[0].rx_octets, 1_000_000, 'a zero rate keeps a counter still');

  const down = await setLoad(sim, id, { nic: { rxOctets: 10 } });
  assert.equal(down.status, 400);
  assert.match(down.body.error, /counters only grow: rxOctets is already 1000000/);
  for (const bad of [{ cpuUtilisation: 101 }, { memoryUsedMb: 4096 }, { nic: { port: 'nope' } }, { disk: { device: 'vdz' } }, { bogus: 1 }]) {
    assert.equal((await setLoad(sim, id, bad)).status, 400, JSON.stringify(bad));
  }
  assert.equal((await setLoad(sim, 'no-such-server', {})).status, 404);

  // The same in code.
  assert.equal(sim.faults.setLoad(id, { cpuUtilisation: 10 }), true);
  assert.equal(sim.faults.load(id)?.cpuUtilisation, 10);
});

// ---------------------------------------------------------------------------------------------
// Cinder snapshots

test('cinder snapshots: creating -> available, list/detail/show, in-use needs force, a volume with snapshots cannot be deleted, volumes from a snapshot', async (t) => {
  const { sim, s } = await start(t, 0.2);
  const vol = await s.request<J>('volumev3', '/volumes', { method: 'POST', body: { volume: { size: 2, name: 'data' } } });
  const volumeId = vol.body.volume.id;
  const early = await s.request<J>('volumev3', '/snapshots', { method: 'POST', body: { snapshot: { volume_id: volumeId } } });
  assert.equal(early.status, 400);
  assert.equal(early.body.badRequest.message, `Invalid volume: Volume ${volumeId} status must be available, but current status is: creating.`);
  await sim.settled();

  const created = await s.request<J>('volumev3', '/snapshots', {
    method: 'POST',
    body: { snapshot: { volume_id: volumeId, name: 'snap1', description: 'before upgrade', metadata: { k: 'v' } } },
  });
  assert.equal(created.status, 202, created.text);
  const snap = created.body.snapshot;
  assert.equal(snap.status, 'creating');
  assert.equal(snap.size, 2);
  assert.equal(snap.volume_id, volumeId);
  assert.deepEqual(snap.metadata, { k: 'v' });
  await sim.settled();
  const shown = (await s.request<J>('volumev3', `/snapshots/${snap.id}`)).body.snapshot;
  assert.equal(shown.status, 'available');
  assert.equal(shown['os-extended-snapshot-attributes:project_id'], s.projectId);
  assert.equal(shown['os-extended-snapshot-attributes:progress'], '100%');
  assert.deepEqual(
    (await s.request<J>('volumev3', '/snapshots')).body.snapshots.map((x: J) => x.id),
    [snap.id],
  );
  assert.equal((await s.request<J>('volumev3', `/snapshots/detail?volume_id=${volumeId}`)).body.snapshots[0].name, 'snap1');
  assert.equal((await s.request<J>('volumev3', '/snapshots?status=creating')).body.snapshots.length, 0);
  const missing = await s.request<J>('volumev3', '/snapshots/00000000-0000-0000-0000-000000000000');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.itemNotFound.message, 'Snapshot 00000000-0000-0000-0000-000000000000 could not be found.');

  const refused = await s.request<J>('volumev3', `/volumes/${volumeId}`, { method: 'DELETE' });
  assert.equal(refused.status, 400);
  assert.match(refused.body.badRequest.message, /have snapshots/);

  // From the snapshot: its size by default; smaller is refused.
  const small = await s.request<J>('volumev3', '/volumes', { method: 'POST', body: { volume: { size: 1, snapshot_id: snap.id } } });
  assert.equal(small.status, 400);
  assert.equal(
    small.body.badRequest.message,
    "Invalid input received: Volume size '1'GB cannot be smaller than the snapshot size 2GB. They must be >= original snapshot size.",
  );
  const restored = await s.request<J>('volumev3', '/volumes', { method: 'POST', body: { volume: { snapshot_id: snap.id, name: 'restored' } } });
  assert.equal(restored.status, 202, restored.text);
  assert.equal(restored.body.volume.size, 2);
  assert.equal(restored.body.volume.snapshot_id, snap.id);
  await sim.settled();
  assert.equal((await s.request<J>('volumev3', `/volumes/${restored.body.volume.id}`)).body.volume.status, 'available');

  // An attached volume: only with force.
  const server = await s.request<J>('compute', '/servers', {
    method: 'POST',
    body: {
      server: {
        name: 'bfv',
        flavorRef: '2',
        networks: 'none',
        block_device_mapping_v2: [{ uuid: restored.body.volume.id, source_type: 'volume', destination_type: 'volume', boot_index: 0 }],
      },
    },
  });
  assert.equal(server.status, 202, server.text);
  await sim.settled();
  const inUse = await s.request<J>('volumev3', '/snapshots', { method: 'POST', body: { snapshot: { volume_id: restored.body.volume.id } } });
  assert.equal(inUse.status, 400);
  assert.match(inUse.body.badRequest.message, /current status is: in-use\.$/);
  const forced = await s.request<J>('volumev3', '/snapshots', { method: 'POST', body: { snapshot: { volume_id: restored.body.volume.id, force: true } } });
  assert.equal(forced.status, 202);
  await sim.settled();

  // A server booted from a snapshot (block_device_mapping_v2 source_type snapshot).
  const fromSnap = await s.request<J>('compute', '/servers', {
    method: 'POST',
    body: {
      server: {
        name: 'from-snap',
        flavorRef: '2',
        networks: 'none',
        block_device_mapping_v2: [{ uuid: snap.id, source_type: 'snapshot', destination_type: 'volume', volume_size: 2, boot_index: 0 }],
      },
    },
  });
  assert.equal(fromSnap.status, 202, fromSnap.text);
  await sim.settled();
  assert.equal((await s.request<J>('compute', `/servers/${fromSnap.body.server.id}`)).body.server.status, 'ACTIVE');

  // Delete: snapshot first, then the volume; or the volume with cascade.
  assert.equal((await s.request('volumev3', `/snapshots/${snap.id}`, { method: 'DELETE' })).status, 202);
  assert.equal((await s.request<J>('volumev3', `/snapshots/${snap.id}`)).body.snapshot.status, 'deleting');
  const twice = await s.request<J>('volumev3', `/snapshots/${snap.id}`, { method: 'DELETE' });
  assert.equal(twice.status, 400);
  assert.match(twice.body.badRequest.message, /^Invalid snapshot: Volume Snapshot status must be available or error/);
  await sim.settled();
  assert.equal((await s.request('volumev3', `/snapshots/${snap.id}`)).status, 404);
  assert.equal((await s.request('volumev3', `/volumes/${volumeId}`, { method: 'DELETE' })).status, 202);
  await sim.settled();
  assert.equal(sim.faults.state().snapshots.count, 1, 'the forced snapshot of the attached volume remains');
  const withSnapshot = await s.request<J>('volumev3', '/volumes', { method: 'POST', body: { volume: { size: 1 } } });
  await sim.settled();
  await s.request('volumev3', '/snapshots', { method: 'POST', body: { snapshot: { volume_id: withSnapshot.body.volume.id } } });
  await sim.settled();
  assert.equal((await s.request('volumev3', `/volumes/${withSnapshot.body.volume.id}?cascade=true`, { method: 'DELETE' })).status, 202);
  await sim.settled();
  assert.equal(sim.faults.state().snapshots.count, 1);

  // The snapshots quota.
  sim.faults.inject({ kind: 'quota', snapshots: 1 });
  const over = await s.request<J>('volumev3', '/snapshots', { method: 'POST', body: { snapshot: { volume_id: restored.body.volume.id, force: true } } });
  assert.equal(over.status, 413);
  assert.equal(over.body.overLimit.message, "SnapshotLimitExceeded: Maximum number of snapshots allowed (1) exceeded for quota 'snapshots'.");
  assert.equal(sim.faults.state().quotas.snapshots, 1);
});

test('heat: OS::Cinder::Volume with snapshot_id restores the snapshot at its size; an unknown snapshot fails the stack', async (t) => {
  const { sim, s } = await start(t);
  const vol = await s.request<J>('volumev3', '/volumes', { method: 'POST', body: { volume: { size: 3 } } });
  await sim.settled();
  const snap = await s.request<J>('volumev3', '/snapshots', { method: 'POST', body: { snapshot: { volume_id: vol.body.volume.id } } });
  await sim.settled();
  const template = (snapshotId: string) => ({
    heat_template_version: '2021-04-16',
    resources: { data: { type: 'OS::Cinder::Volume', properties: { snapshot_id: snapshotId } } },
    outputs: { id: { value: { get_resource: 'data' } } },
  });
  const stack = await s.request<J>('orchestration', '/stacks', { method: 'POST', body: { stack_name: 'restore', template: template(snap.body.snapshot.id) } });
  assert.equal(stack.status, 201, stack.text);
  await sim.settled();
  const shown = (await s.request<J>('orchestration', `/stacks/restore/${stack.body.stack.id}`)).body.stack;
  assert.equal(shown.stack_status, 'CREATE_COMPLETE', shown.stack_status_reason);
  const volume = (await s.request<J>('volumev3', `/volumes/${shown.outputs[0].output_value}`)).body.volume;
  assert.equal(volume.snapshot_id, snap.body.snapshot.id);
  assert.equal(volume.size, 3);

  const bad = await s.request<J>('orchestration', '/stacks', {
    method: 'POST',
    body: { stack_name: 'nothing', template: template('00000000-0000-0000-0000-000000000000') },
  });
  await sim.settled();
  const failed = (await s.request<J>('orchestration', `/stacks/nothing/${bad.body.stack.id}`)).body.stack;
  assert.equal(failed.stack_status, 'CREATE_FAILED');
  assert.match(failed.stack_status_reason, /Snapshot 00000000-0000-0000-0000-000000000000 could not be found/);
});
