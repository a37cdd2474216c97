// Tests of the OpenStack simulator's services over HTTP, as a client sees them: Keystone auth,
// catalog, 401s and token expiry; Glance upload and checksums; Nova servers, actions, scheduling
// failures and quotas; Neutron allocation and conflicts; Cinder volumes; and the control API.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { login, passwordAuth, send, type Session } from '#local/openstack/client.ts';
import { startOpenStackSimulator, type OpenStackSimulator, type OpenStackSimulatorOptions } from '#local/openstack/simulator.ts';

// JSON bodies are checked field by field below; their full shapes are the simulator's business.
type J = any;

async function start(t: TestContext, opts: OpenStackSimulatorOptions = {}): Promise<{ sim: OpenStackSimulator; s: Session }> {
  const sim = await startOpenStackSimulator({ timeScale: 0.01, ...opts });
  t.after(() => sim.close());
  return { sim, s: await login(sim.authUrl, sim.credentials) };
}

/** Re-checks a condition until it holds; the limit only turns a hang into a failure. */
async function waitFor(what: string, condition: () => Promise<boolean> | boolean, limitMs = 20_000): Promise<void> {
  const giveUp = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > giveUp) assert.fail(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function network(s: Session, name: string, cidr: string): Promise<{ net: J; subnet: J }> {
  const net = await s.request<J>('network', '/v2.0/networks', { method: 'POST', body: { network: { name } } });
  assert.equal(net.status, 201, net.text);
  const subnet = await s.request<J>('network', '/v2.0/subnets', {
    method: 'POST',
    body: { subnet: { network_id: net.body.network.id, cidr, ip_version: 4, name: `${name}-subnet` } },
  });
  assert.equal(subnet.status, 201, subnet.text);
  return { net: net.body.network, subnet: subnet.body.subnet };
}

async function cirros(s: Session): Promise<string> {
  const list = await s.request<J>('image', '/v2/images?name=cirros-0.5.2-x86_64-disk');
  return list.body.images[0].id;
}

// ---------------------------------------------------------------------------------------------
// Keystone

test('keystone: version document, password auth by name and by id, catalog with every service and interface', async (t) => {
  const { sim, s } = await start(t);
  const version = await send<J>(sim.authUrl);
  assert.equal(version.status, 200);
  assert.match(version.body.version.id, /^v3\.\d+$/);
  assert.equal(version.body.version.status, 'stable');

  const token = s.tokenBody.token as J;
  assert.match(s.token, /^gAAAAA/);
  assert.equal(token.project.name, 'admin');
  assert.equal(token.project.domain.name, 'Default');
  assert.equal(token.user.name, 'admin');
  assert.ok(token.roles.some((r: J) => r.name === 'admin'));
  assert.deepEqual(token.methods, ['password']);
  const ttl = Date.parse(token.expires_at) - Date.parse(token.issued_at);
  assert.ok(ttl > 3_590_000 && ttl <= 3_600_000, `expires after an hour (${ttl} ms)`);
  const types = token.catalog.map((c: J) => c.type).sort();
  assert.deepEqual(types, ['block-storage', 'compute', 'identity', 'image', 'network', 'orchestration', 'volumev3']);
  for (const entry of token.catalog) {
    assert.deepEqual(entry.endpoints.map((e: J) => e.interface).sort(), ['admin', 'internal', 'public']);
    for (const e of entry.endpoints) assert.equal(e.region, 'RegionOne');
  }
  const url = (type: string) => token.catalog.find((c: J) => c.type === type).endpoints[0].url;
  assert.equal(url('compute'), `${sim.url}/compute/v2.1`);
  assert.equal(url('orchestration'), `${sim.url}/heat-api/v1/${s.projectId}`);
  assert.equal(url('volumev3'), `${sim.url}/volume/v3/${s.projectId}`);

  // By ids: user id and project id, no domains needed.
  const byId = await send<J>(`${sim.authUrl}/auth/tokens`, {
    method: 'POST',
    body: {
      auth: {
        identity: { methods: ['password'], password: { user: { id: token.user.id, password: sim.credentials.password } } },
        scope: { project: { id: token.project.id } },
      },
    },
  });
  assert.equal(byId.status, 201);
  assert.equal(byId.body.token.project.id, token.project.id);

  // Validation of a token by another.
  const validated = await send<J>(`${sim.authUrl}/auth/tokens`, {
    headers: { 'x-auth-token': s.token, 'x-subject-token': byId.headers.get('x-subject-token') ?? '' },
  });
  assert.equal(validated.status, 200);
  assert.equal(validated.body.token.user.id, token.user.id);
  const unknown = await send<J>(`${sim.authUrl}/auth/tokens`, { headers: { 'x-auth-token': s.token, 'x-subject-token': 'gAAAAAnope' } });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.error.code, 404);
});

test("keystone: wrong credentials are 401 in keystone's shape; services refuse missing, unknown and expired tokens", async (t) => {
  const { sim, s } = await start(t, { tokenTtlSeconds: 120 });
  const wrong = await send<J>(`${sim.authUrl}/auth/tokens`, { method: 'POST', body: passwordAuth({ ...sim.credentials, password: 'nope' }) });
  assert.equal(wrong.status, 401);
  assert.deepEqual(wrong.body, { error: { code: 401, message: 'The request you have made requires authentication.', title: 'Unauthorized' } });
  assert.equal(wrong.headers.get('x-subject-token'), null);
  const noProject = await send<J>(`${sim.authUrl}/auth/tokens`, { method: 'POST', body: passwordAuth({ ...sim.credentials, project: 'nope' }) });
  assert.equal(noProject.status, 401);
  const malformed = await send<J>(`${sim.authUrl}/auth/tokens`, { method: 'POST', body: { auth: {} } });
  assert.equal(malformed.status, 400);

  const ttl = Date.parse((s.tokenBody.token as J).expires_at) - Date.parse((s.tokenBody.token as J).issued_at);
  assert.ok(ttl > 110_000 && ttl <= 120_000, 'the configured TTL');

  const compute = s.endpoint('compute');
  const variants: Array<Record<string, string>> = [{}, { 'x-auth-token': 'gAAAAAbogus' }];
  for (const headers of variants) {
    const refused = await send<J>(`${compute}/servers`, { headers });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.title, 'Unauthorized');
    assert.match(refused.headers.get('www-authenticate') ?? '', /^Keystone uri="/);
  }
  assert.equal((await s.request('compute', '/servers')).status, 200);
  // Version discovery needs no token.
  assert.equal((await send(`${compute}`)).status, 200);

  const expired = await send<J>(`${sim.url}/_sim/tokens/expire`, { method: 'POST' });
  assert.equal(expired.status, 200);
  assert.ok(expired.body.expired >= 1);
  for (const type of ['compute', 'image', 'network', 'orchestration', 'volumev3']) {
    assert.equal(
      (
        await s.request(
          type,
          type === 'image'
            ? '/v2/images'
            : type === 'network'
              ? '/v2.0/networks'
              : type === 'orchestration'
                ? '/stacks'
                : type === 'volumev3'
                  ? '/volumes'
                  : '/servers',
        )
      ).status,
      401,
      type,
    );
  }
  const again = await login(sim.authUrl, sim.credentials);
  assert.equal((await again.request('compute', '/servers')).status, 200);
});

// ---------------------------------------------------------------------------------------------
// Glance

test('glance: preloaded cirros; create (queued), upload (active) with size, md5 checksum and sha512 from the bytes; list filters; delete', async (t) => {
  const { s } = await start(t);
  const preloaded = await s.request<J>('image', '/v2/images?name=cirros-0.5.2-x86_64-disk');
  assert.equal(preloaded.status, 200);
  assert.equal(preloaded.body.images.length, 1);
  assert.equal(preloaded.body.images[0].status, 'active');
  assert.equal(preloaded.body.images[0].disk_format, 'qcow2');

  const created = await s.request<J>('image', '/v2/images', {
    method: 'POST',
    body: { name: 'vnf-image', disk_format: 'qcow2', container_format: 'bare', visibility: 'private', hw_rng_model: 'virtio' },
  });
  assert.equal(created.status, 201);
  const image = created.body;
  assert.equal(image.status, 'queued');
  assert.equal(image.size, null);
  assert.equal(image.checksum, null);
  assert.equal(image.file, `/v2/images/${image.id}/file`);
  assert.equal(image.hw_rng_model, 'virtio');

  const queued = await s.request<J>('image', '/v2/images?status=queued');
  assert.deepEqual(
    queued.body.images.map((i: J) => i.id),
    [image.id],
  );

  const data = Buffer.alloc(300_000);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7) % 251;
  const wrongType = await s.request('image', `/v2/images/${image.id}/file`, { method: 'PUT', raw: data, headers: { 'content-type': 'text/plain' } });
  assert.equal(wrongType.status, 415);
  const upload = await s.request('image', `/v2/images/${image.id}/file`, { method: 'PUT', raw: data, headers: { 'content-type': 'application/octet-stream' } });
  assert.equal(upload.status, 204);

  const shown = await s.request<J>('image', `/v2/images/${image.id}`);
  assert.equal(shown.body.status, 'active');
  assert.equal(shown.body.size, data.length);
  assert.equal(shown.body.checksum, createHash('md5').update(data).digest('hex'));
  assert.equal(shown.body.os_hash_algo, 'sha512');
  assert.equal(shown.body.os_hash_value, createHash('sha512').update(data).digest('hex'));

  const again = await s.request('image', `/v2/images/${image.id}/file`, { method: 'PUT', raw: data, headers: { 'content-type': 'application/octet-stream' } });
  assert.equal(again.status, 409);
  const download = await fetch(`${s.endpoint('image')}/v2/images/${image.id}/file`, { headers: { 'x-auth-token': s.token } });
  assert.equal(download.status, 200);
  assert.deepEqual(Buffer.from(await download.arrayBuffer()), data);

  const active = await s.request<J>('image', '/v2/images?status=active&name=vnf-image');
  assert.deepEqual(
    active.body.images.map((i: J) => i.id),
    [image.id],
  );

  const noFormat = await s.request<J>('image', '/v2/images', { method: 'POST', body: { name: 'bare' } });
  const refused = await s.request('image', `/v2/images/${noFormat.body.id}/file`, {
    method: 'PUT',
    raw: 'x',
    headers: { 'content-type': 'application/octet-stream' },
  });
  assert.equal(refused.status, 400);

  assert.equal((await s.request('image', `/v2/images/${image.id}`, { method: 'DELETE' })).status, 204);
  const gone = await s.request('image', `/v2/images/${image.id}`);
  assert.equal(gone.status, 404);
  assert.match(gone.text, /^404 Not Found/);
  assert.equal((await s.request('image', `/v2/images/${noFormat.body.id}`, { method: 'DELETE' })).status, 204);
});

test('glance: the image is "saving" while the store writes, and settled() waits for it', async (t) => {
  const { sim, s } = await start(t, { timeScale: 1 });
  const image = (await s.request<J>('image', '/v2/images', { method: 'POST', body: { name: 'slow', disk_format: 'raw', container_format: 'bare' } })).body;
  let done = false;
  const upload = s
    .request('image', `/v2/images/${image.id}/file`, { method: 'PUT', raw: 'abc', headers: { 'content-type': 'application/octet-stream' } })
    .then((r) => {
      done = true;
      return r;
    });
  await waitFor('saving', async () => (await s.request<J>('image', `/v2/images/${image.id}`)).body.status === 'saving');
  await sim.settled();
  assert.ok(done, 'settled() waits for the upload');
  assert.equal((await upload).status, 204);
  assert.equal((await s.request<J>('image', `/v2/images/${image.id}`)).body.status, 'active');
});

// ---------------------------------------------------------------------------------------------
// Nova, Neutron, Cinder

test('nova: devstack flavors; server BUILD -> ACTIVE with addresses from its port; stop/start/reboot; delete releases the port', async (t) => {
  // The reboot's REBOOT status is read while it lasts: at time scale 0.2 that is 200 ms, not the
  // 10 ms of the default 0.01, which a loaded machine running test files side by side can miss.
  const { sim, s } = await start(t, { timeScale: 0.2 });
  const flavors = await s.request<J>('compute', '/flavors/detail');
  const byName = Object.fromEntries(flavors.body.flavors.map((f: J) => [f.name, f]));
  assert.equal(byName['m1.tiny'].id, '1');
  assert.equal(byName['m1.small'].id, '2');
  assert.equal(byName['m1.medium'].id, '3');
  assert.equal(byName['m1.small'].ram, 2048);

  const { net, subnet } = await network(s, 'net0', '10.10.0.0/24');
  const created = await s.request<J>('compute', '/servers', {
    method: 'POST',
    body: { server: { name: 'vm1', imageRef: await cirros(s), flavorRef: '1', networks: [{ uuid: net.id }] } },
  });
  assert.equal(created.status, 202, created.text);
  const id = created.body.server.id;
  assert.ok(created.body.server.adminPass);
  assert.match(created.headers.get('location') ?? '', new RegExp(`/servers/${id}$`));
  const building = await s.request<J>('compute', `/servers/${id}`);
  assert.equal(building.body.server.status, 'BUILD');

  await sim.settled();
  const server = (await s.request<J>('compute', `/servers/${id}`)).body.server;
  assert.equal(server.status, 'ACTIVE');
  assert.equal(server['OS-EXT-STS:vm_state'], 'active');
  assert.equal(server['OS-EXT-AZ:availability_zone'], 'nova');
  assert.equal(server.flavor.id, '1');
  const [address] = server.addresses.net0;
  assert.equal(address.version, 4);
  assert.match(address.addr, /^10\.10\.0\.\d+$/);
  const ports = await s.request<J>('network', `/v2.0/ports?device_id=${id}`);
  assert.equal(ports.body.ports.length, 1);
  const [port] = ports.body.ports;
  assert.equal(port.status, 'ACTIVE');
  assert.equal(port.device_owner, 'compute:nova');
  assert.equal(port.mac_address, address['OS-EXT-IPS-MAC:mac_addr']);
  assert.deepEqual(port.fixed_ips, [{ subnet_id: subnet.id, ip_address: address.addr }]);

  const v247 = await s.request<J>('compute', `/servers/${id}`, { headers: { 'openstack-api-version': 'compute 2.47' } });
  assert.equal(v247.headers.get('openstack-api-version'), 'compute 2.47');
  assert.equal(v247.body.server.flavor.original_name, 'm1.tiny');
  assert.equal((await s.request('compute', '/servers', { headers: { 'openstack-api-version': 'compute 9.0' } })).status, 406);

  assert.equal((await s.request('compute', `/servers/${id}/action`, { method: 'POST', body: { 'os-stop': null } })).status, 202);
  await sim.settled();
  assert.equal((await s.request<J>('compute', `/servers/${id}`)).body.server.status, 'SHUTOFF');
  assert.equal((await s.request<J>('network', `/v2.0/ports/${port.id}`)).body.port.status, 'DOWN');
  const twice = await s.request<J>('compute', `/servers/${id}/action`, { method: 'POST', body: { 'os-stop': null } });
  assert.equal(twice.status, 409);
  assert.match(twice.body.conflictingRequest.message, /Cannot 'stop' instance .* while it is in vm_state stopped/);
  assert.equal((await s.request('compute', `/servers/${id}/action`, { method: 'POST', body: { 'os-start': null } })).status, 202);
  await sim.settled();
  assert.equal((await s.request('compute', `/servers/${id}/action`, { method: 'POST', body: { reboot: { type: 'SOFT' } } })).status, 202);
  assert.equal((await s.request<J>('compute', `/servers/${id}`)).body.server.status, 'REBOOT');
  await sim.settled();
  assert.equal((await s.request<J>('compute', `/servers/${id}`)).body.server.status, 'ACTIVE');

  assert.equal((await s.request('compute', `/servers/${id}`, { method: 'DELETE' })).status, 204);
  await sim.settled();
  const gone = await s.request<J>('compute', `/servers/${id}`);
  assert.equal(gone.status, 404);
  assert.equal(gone.body.itemNotFound.code, 404);
  assert.equal((await s.request<J>('network', `/v2.0/ports?device_id=${id}`)).body.ports.length, 0, 'the port Nova made is deleted with the server');
  assert.equal(sim.faults.state().servers.count, 0);
});

test('nova: a compute host moved to another availability zone (control API) takes the servers asking for that zone', async (t) => {
  const { sim, s } = await start(t);
  const move = (host: string, body: unknown) => send<J>(`${sim.url}/_sim/hosts/${host}/zone`, { method: 'POST', body });
  assert.equal((await move('sim-compute-2', { zone: 'az-1' })).status, 200);
  assert.equal((await move('sim-compute-9', { zone: 'az-1' })).status, 404);
  assert.equal((await move('sim-compute-3', { zone: '' })).status, 400);
  const zones = await s.request<J>('compute', '/os-availability-zone');
  assert.deepEqual(zones.body.availabilityZoneInfo.map((z: J) => z.zoneName).sort(), ['az-1', 'nova']);
  const { net } = await network(s, 'net0', '10.10.0.0/24');
  const boot = async (name: string, zone?: string) =>
    s.request<J>('compute', '/servers', {
      method: 'POST',
      body: { server: { name, imageRef: await cirros(s), flavorRef: '1', networks: [{ uuid: net.id }], ...(zone ? { availability_zone: zone } : {}) } },
    });
  const inZone = await boot('vm-az-1', 'az-1');
  assert.equal(inZone.status, 202, inZone.text);
  assert.equal((await boot('vm-az-9', 'az-9')).status, 400);
  await sim.settled();
  const server = (await s.request<J>('compute', `/servers/${inZone.body.server.id}`)).body.server;
  assert.equal(server['OS-EXT-AZ:availability_zone'], 'az-1');
  // A host with servers stays where it is.
  assert.equal((await move('sim-compute-2', { zone: 'nova' })).status, 409);
});

test('nova: "No valid host was found" for a flavor too big and for an injected fault; quota exceeded is 403', async (t) => {
  const { sim, s } = await start(t);
  const image = await cirros(s);
  const huge = await s.request<J>('compute', '/flavors', { method: 'POST', body: { flavor: { name: 'huge', ram: 2048, vcpus: 2, disk: 2000 } } });
  assert.equal(huge.status, 200);
  const tooBig = await s.request<J>('compute', '/servers', {
    method: 'POST',
    body: { server: { name: 'big', imageRef: image, flavorRef: huge.body.flavor.id, networks: 'none' } },
  });
  assert.equal(tooBig.status, 202);
  sim.faults.inject({ kind: 'server-error' });
  const faulty = await s.request<J>('compute', '/servers', {
    method: 'POST',
    body: { server: { name: 'faulty', imageRef: image, flavorRef: '1', networks: 'none' } },
  });
  await sim.settled();
  for (const id of [tooBig.body.server.id, faulty.body.server.id]) {
    const server = (await s.request<J>('compute', `/servers/${id}`)).body.server;
    assert.equal(server.status, 'ERROR');
    assert.equal(server.fault.code, 500);
    assert.equal(server.fault.message, 'No valid host was found. ');
  }
  const fine = await s.request<J>('compute', '/servers', {
    method: 'POST',
    body: { server: { name: 'fine', imageRef: image, flavorRef: '1', networks: 'none' } },
  });
  await sim.settled();
  assert.equal((await s.request<J>('compute', `/servers/${fine.body.server.id}`)).body.server.status, 'ACTIVE', 'the fault was consumed');

  // Three servers exist (ERROR ones count too); a quota of 3 refuses the fourth.
  const q = await send<J>(`${sim.url}/_sim/faults`, { method: 'POST', body: { kind: 'quota', instances: 3 } });
  assert.equal(q.status, 201);
  const refused = await s.request<J>('compute', '/servers', {
    method: 'POST',
    body: { server: { name: 'fourth', imageRef: image, flavorRef: '1', networks: 'none' } },
  });
  assert.equal(refused.status, 403);
  assert.equal(refused.body.forbidden.message, 'Quota exceeded for instances: Requested 1, but already used 3 of 3 instances');
  const limits = await s.request<J>('compute', '/limits');
  assert.equal(limits.body.limits.absolute.maxTotalInstances, 3);
  assert.equal((await send(`${sim.url}/_sim/faults`, { method: 'DELETE' })).status, 204);
  assert.equal((await s.request<J>('compute', '/limits')).body.limits.absolute.maxTotalInstances, 10, 'cleared faults restore the quota');
});

test('nova: anti-affinity server groups spread over the compute hosts; one more member finds no host', async (t) => {
  const { sim, s } = await start(t, { computeHosts: [1, 2, 3].map((n) => ({ name: `host-${n}`, zone: 'nova', vcpus: 64, memoryMb: 65536, diskGb: 500 })) });
  const group = await s.request<J>('compute', '/os-server-groups', { method: 'POST', body: { server_group: { name: 'aa', policies: ['anti-affinity'] } } });
  assert.equal(group.status, 200);
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    const r = await s.request<J>('compute', '/servers', {
      method: 'POST',
      body: {
        server: { name: `m${i}`, imageRef: await cirros(s), flavorRef: '1', networks: 'none' },
        'os:scheduler_hints': { group: group.body.server_group.id },
      },
    });
    assert.equal(r.status, 202);
    ids.push(r.body.server.id);
  }
  await sim.settled();
  const servers = await Promise.all(ids.map(async (id) => (await s.request<J>('compute', `/servers/${id}`)).body.server));
  const active = servers.filter((x) => x.status === 'ACTIVE');
  assert.equal(active.length, 3);
  assert.equal(new Set(active.map((x) => x.hostId)).size, 3, 'each on its own host');
  assert.equal(servers.filter((x) => x.status === 'ERROR').length, 1);
  const shown = await s.request<J>('compute', `/os-server-groups/${group.body.server_group.id}`);
  assert.equal(shown.body.server_group.members.length, 4);
  const v264 = await s.request<J>('compute', `/os-server-groups/${group.body.server_group.id}`, { headers: { 'openstack-api-version': 'compute 2.64' } });
  assert.equal(v264.body.server_group.policy, 'anti-affinity');
});

test('neutron: fixed IPs from the subnet, list filters, exhaustion, in-use conflicts, preloaded public network', async (t) => {
  const { sim, s } = await start(t);
  const publicNet = await s.request<J>('network', '/v2.0/networks?name=public');
  assert.equal(publicNet.body.networks.length, 1);
  assert.equal(publicNet.body.networks[0]['router:external'], true);
  assert.equal(publicNet.body.networks[0].subnets.length, 1);

  const { net, subnet } = await network(s, 'tiny', '192.168.5.0/29');
  assert.equal(subnet.gateway_ip, '192.168.5.1');
  assert.deepEqual(subnet.allocation_pools, [{ start: '192.168.5.2', end: '192.168.5.6' }]);
  const ports: J[] = [];
  for (let i = 0; i < 5; i++) {
    const p = await s.request<J>('network', '/v2.0/ports', {
      method: 'POST',
      body: { port: { network_id: net.id, name: `p${i}`, device_id: i === 0 ? 'dev-0' : '' } },
    });
    assert.equal(p.status, 201, p.text);
    ports.push(p.body.port);
  }
  assert.deepEqual(
    ports.map((p) => p.fixed_ips[0].ip_address),
    ['192.168.5.2', '192.168.5.3', '192.168.5.4', '192.168.5.5', '192.168.5.6'],
  );
  assert.match(ports[0].mac_address, /^fa:16:3e(:[0-9a-f]{2}){3}$/);
  const full = await s.request<J>('network', '/v2.0/ports', { method: 'POST', body: { port: { network_id: net.id } } });
  assert.equal(full.status, 409);
  assert.equal(full.body.NeutronError.type, 'IpAddressGenerationFailure');

  assert.equal((await s.request<J>('network', '/v2.0/ports?name=p3')).body.ports.length, 1);
  assert.equal((await s.request<J>('network', `/v2.0/ports?network_id=${net.id}`)).body.ports.length, 5);
  assert.equal((await s.request<J>('network', '/v2.0/ports?device_id=dev-0')).body.ports[0].id, ports[0].id);
  const fields = await s.request<J>('network', `/v2.0/ports?network_id=${net.id}&fields=id&fields=name`);
  assert.deepEqual(Object.keys(fields.body.ports[0]).sort(), ['id', 'name']);

  const subnetInUse = await s.request<J>('network', `/v2.0/subnets/${subnet.id}`, { method: 'DELETE' });
  assert.equal(subnetInUse.status, 409);
  assert.equal(subnetInUse.body.NeutronError.type, 'SubnetInUse');
  const netInUse = await s.request<J>('network', `/v2.0/networks/${net.id}`, { method: 'DELETE' });
  assert.equal(netInUse.status, 409);
  assert.equal(netInUse.body.NeutronError.type, 'NetworkInUse');
  const taken = await s.request<J>('network', '/v2.0/ports', {
    method: 'POST',
    body: { port: { network_id: publicNet.body.networks[0].id, fixed_ips: [{ ip_address: '172.24.4.1' }] } },
  });
  assert.equal(taken.status, 201, 'the gateway address may be taken explicitly (routers do)');

  for (const p of ports) assert.equal((await s.request('network', `/v2.0/ports/${p.id}`, { method: 'DELETE' })).status, 204);
  assert.equal((await s.request('network', `/v2.0/ports/${taken.body.port.id}`, { method: 'DELETE' })).status, 204);
  assert.equal((await s.request('network', `/v2.0/networks/${net.id}`, { method: 'DELETE' })).status, 204);
  const missing = await s.request<J>('network', `/v2.0/networks/${net.id}`);
  assert.equal(missing.status, 404);
  assert.equal(missing.body.NeutronError.type, 'NetworkNotFound');
  const state = sim.faults.state();
  assert.deepEqual([state.networks.count, state.subnets.count, state.ports.count], [0, 0, 0]);
});

test('cinder: creating -> available; in-use while a server boots from it; deleting an attached volume is refused', async (t) => {
  const { sim, s } = await start(t);
  const created = await s.request<J>('volumev3', '/volumes', { method: 'POST', body: { volume: { size: 1, name: 'root', imageRef: await cirros(s) } } });
  assert.equal(created.status, 202);
  assert.equal(created.body.volume.status, 'creating');
  const id = created.body.volume.id;
  await sim.settled();
  const available = (await s.request<J>('volumev3', `/volumes/${id}`)).body.volume;
  assert.equal(available.status, 'available');
  assert.equal(available.bootable, 'true');

  const server = await s.request<J>('compute', '/servers', {
    method: 'POST',
    body: {
      server: {
        name: 'bfv',
        flavorRef: '2',
        networks: 'none',
        block_device_mapping_v2: [{ uuid: id, source_type: 'volume', destination_type: 'volume', boot_index: 0 }],
      },
    },
  });
  assert.equal(server.status, 202, server.text);
  const second = await s.request<J>('compute', '/servers', {
    method: 'POST',
    body: {
      server: {
        name: 'again',
        flavorRef: '2',
        networks: 'none',
        block_device_mapping_v2: [{ uuid: id, source_type: 'volume', destination_type: 'volume', boot_index: 0 }],
      },
    },
  });
  assert.equal(second.status, 400, 'the volume is reserved for the first server');
  await sim.settled();
  const inUse = (await s.request<J>('volumev3', `/volumes/${id}`)).body.volume;
  assert.equal(inUse.status, 'in-use');
  assert.equal(inUse.attachments[0].server_id, server.body.server.id);
  assert.equal(inUse.attachments[0].device, '/dev/vda');
  const shown = (await s.request<J>('compute', `/servers/${server.body.server.id}`)).body.server;
  assert.equal(shown.image, '');
  assert.deepEqual(shown['os-extended-volumes:volumes_attached'], [{ id }]);

  const refused = await s.request<J>('volumev3', `/volumes/${id}`, { method: 'DELETE' });
  assert.equal(refused.status, 400);
  assert.match(refused.body.badRequest.message, /^Invalid volume: Volume status must be available/);
  await s.request('compute', `/servers/${server.body.server.id}`, { method: 'DELETE' });
  await sim.settled();
  assert.equal((await s.request<J>('volumev3', `/volumes/${id}`)).body.volume.status, 'available');
  assert.equal((await s.request('volumev3', `/volumes/${id}`, { method: 'DELETE' })).status, 202);
  await sim.settled();
  assert.equal((await s.request('volumev3', `/volumes/${id}`)).status, 404);
});

// ---------------------------------------------------------------------------------------------
// Control API

test("control: injected 5xx per service (JSON 500 in the service's shape, HTML 503), counted; bad faults are 400", async (t) => {
  const { sim, s } = await start(t);
  assert.equal((await send(`${sim.url}/_sim/faults`, { method: 'POST', body: { kind: 'http-5xx', service: 'compute', count: 2 } })).status, 201);
  assert.equal(
    (await send(`${sim.url}/_sim/faults`, { method: 'POST', body: { kind: 'http-5xx', service: 'glance', status: 503, method: 'POST' } })).status,
    201,
  );
  for (let i = 0; i < 2; i++) {
    const failed = await s.request<J>('compute', '/servers');
    assert.equal(failed.status, 500);
    assert.equal(failed.body.computeFault.code, 500);
  }
  assert.equal((await s.request('compute', '/servers')).status, 200);
  assert.equal((await s.request('image', '/v2/images')).status, 200, 'only POSTs fail');
  const unavailable = await s.request('image', '/v2/images', { method: 'POST', body: { name: 'x' } });
  assert.equal(unavailable.status, 503);
  assert.match(unavailable.text, /Service Unavailable/);
  assert.equal((await s.request('image', '/v2/images', { method: 'POST', body: { name: 'x' } })).status, 201);

  const listed = await send<J>(`${sim.url}/_sim/faults`);
  assert.deepEqual(listed.body.faults, []);
  for (const bad of [{ kind: 'nope' }, { kind: 'http-5xx', service: 'swift' }, { kind: 'slow', service: 'nova' }]) {
    assert.equal((await send(`${sim.url}/_sim/faults`, { method: 'POST', body: bad })).status, 400, JSON.stringify(bad));
  }
  assert.throws(() => sim.faults.inject({ kind: 'server-error', count: 0 }), /invalid fault/);
});

test('control: a "slow" service holds requests until settled; state, settled over HTTP', async (t) => {
  const { sim, s } = await start(t);
  sim.faults.inject({ kind: 'slow', service: 'nova', ms: 150 });
  assert.equal(sim.faults.active().length, 1);
  let answered = false;
  const pending = s.request('compute', '/flavors').then((r) => {
    answered = true;
    return r;
  });
  const settled = await send<J>(`${sim.url}/_sim/settled`, { method: 'POST' });
  assert.equal(settled.status, 200);
  assert.ok(answered, 'settled waits for the slowed request');
  assert.equal((await pending).status, 200);

  const state = await send<J>(`${sim.url}/_sim/state`);
  assert.equal(state.status, 200);
  for (const key of ['stacks', 'servers', 'ports', 'images', 'volumes', 'networks', 'subnets'])
    assert.deepEqual([state.body[key].count, state.body[key].ids], [0, []], key);
  assert.equal(state.body.preloaded.images[0].name, 'cirros-0.5.2-x86_64-disk');
  assert.equal(state.body.preloaded.networks[0].name, 'public');
  assert.equal((await send(`${sim.url}/_sim/stacks/nope/work-time`)).status, 404);
  assert.equal((await send(`${sim.url}/_sim/signal/nope`, { method: 'POST' })).status, 404);
});
