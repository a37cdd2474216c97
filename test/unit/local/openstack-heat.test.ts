// Tests of the simulator's Heat over HTTP: a Tacker-like VNF template (scaling group of nested
// VDU1.yaml members, a server booting from a volume, an internal network, the nfv json parameter)
// through create, scale-out by PATCH, delete; validation errors; failures and their reason chains;
// software deployments waiting for a signal; heal by mark_unhealthy; groups and scaling policies.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { login, send, type Session } from '#local/openstack/client.ts';
import { startOpenStackSimulator, type OpenStackSimulator, type OpenStackSimulatorOptions } from '#local/openstack/simulator.ts';

// JSON bodies are checked field by field below; their full shapes are the simulator's business.
type J = any;

const VNF = `
heat_template_version: 2013-05-23
description: A Tacker-like VNF
parameters:
  nfv:
    type: json
resources:
  VDU1:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 3
      desired_capacity: { get_param: [ nfv, VDU, VDU1, desired_capacity ] }
      resource:
        type: VDU1.yaml
        properties:
          flavor: { get_param: [ nfv, VDU, VDU1, computeFlavourId ] }
          image: { get_param: [ nfv, VDU, VDU1, vcImageId ] }
          zone: { get_param: [ nfv, VDU, VDU1, locationConstraints ] }
          net1: { get_param: [ nfv, CP, VDU1_CP1, network ] }
          net2: { get_resource: internalVL1 }
  VDU1_scale_out:
    type: OS::Heat::ScalingPolicy
    properties:
      adjustment_type: change_in_capacity
      auto_scaling_group_id: { get_resource: VDU1 }
      scaling_adjustment: 1
  VDU2:
    type: OS::Nova::Server
    properties:
      flavor: { get_param: [ nfv, VDU, VDU2, computeFlavourId ] }
      name: VDU2
      block_device_mapping_v2: [ { volume_id: { get_resource: VirtualStorage } } ]
      networks:
        - port: { get_resource: VDU2_CP2 }
      scheduler_hints:
        group: { get_resource: anti_affinity_group }
  VirtualStorage:
    type: OS::Cinder::Volume
    properties:
      image: { get_param: [ nfv, VDU, VirtualStorage, vcImageId ] }
      size: 1
  VDU2_CP2:
    type: OS::Neutron::Port
    properties:
      network: { get_resource: internalVL1 }
  anti_affinity_group:
    type: OS::Nova::ServerGroup
    properties:
      name: sample-anti-affinity
      policies: [ anti-affinity ]
  internalVL1:
    type: OS::Neutron::Net
  internalVL1_subnet:
    type: OS::Neutron::Subnet
    properties:
      ip_version: 4
      network: { get_resource: internalVL1 }
      cidr: 192.168.10.0/24
outputs:
  vdu1_ips:
    value: { get_attr: [ VDU1, outputs_list, cp2_ip ] }
  vdu2_ip:
    value: { get_attr: [ VDU2_CP2, fixed_ips, 0, ip_address ] }
  vdu2_label:
    value:
      str_replace:
        template: vdu2=$NAME ($FLAVOR)
        params:
          $NAME: { get_attr: [ VDU2, name ] }
          $FLAVOR: { get_param: [ nfv, VDU, VDU2, computeFlavourId ] }
  flavors:
    value: { list_join: [ ',', [ { get_param: [ nfv, VDU, VDU1, computeFlavourId ] }, { get_param: [ nfv, VDU, VDU2, computeFlavourId ] } ] ] }
`;

const VDU1 = `
heat_template_version: 2013-05-23
description: VDU1, one server and its two ports
parameters:
  flavor: { type: string }
  image: { type: string }
  zone: { type: string }
  net1: { type: string }
  net2: { type: string }
resources:
  VDU1:
    type: OS::Nova::Server
    properties:
      flavor: { get_param: flavor }
      image: { get_param: image }
      name: VDU1
      availability_zone: { get_param: zone }
      networks:
        - port: { get_resource: VDU1_CP1 }
        - port: { get_resource: VDU1_CP2 }
  VDU1_CP1:
    type: OS::Neutron::Port
    properties: { network: { get_param: net1 } }
  VDU1_CP2:
    type: OS::Neutron::Port
    properties: { network: { get_param: net2 } }
outputs:
  cp2_ip:
    value: { get_attr: [ VDU1_CP2, fixed_ips, 0, ip_address ] }
`;

const IMAGE = 'cirros-0.5.2-x86_64-disk';

function nfv(publicNet: string, desired = 1): Record<string, unknown> {
  return {
    VDU: {
      VDU1: { computeFlavourId: 'm1.tiny', vcImageId: IMAGE, desired_capacity: desired },
      VDU2: { computeFlavourId: 'm1.small' },
      VirtualStorage: { vcImageId: IMAGE },
    },
    CP: { VDU1_CP1: { network: publicNet } },
  };
}

interface Harness {
  sim: OpenStackSimulator;
  s: Session;
  publicNet: string;
  create(name: string, body: Record<string, unknown>): Promise<{ id: string; path: string }>;
  show(path: string): Promise<J>;
  resources(path: string, depth?: number): Promise<J[]>;
}

async function start(t: TestContext, opts: OpenStackSimulatorOptions = {}): Promise<Harness> {
  const sim = await startOpenStackSimulator({ timeScale: 0.005, ...opts });
  t.after(() => sim.close());
  const s = await login(sim.authUrl, sim.credentials);
  const publicNet = (sim.faults.state().preloaded.networks[0] as { id: string }).id;
  return {
    sim,
    s,
    publicNet,
    async create(name, body) {
      const reply = await s.request<J>('orchestration', '/stacks', { method: 'POST', body: { stack_name: name, ...body } });
      assert.equal(reply.status, 201, reply.text);
      return { id: reply.body.stack.id, path: `/stacks/${name}/${reply.body.stack.id}` };
    },
    async show(path) {
      const reply = await s.request<J>('orchestration', path);
      assert.equal(reply.status, 200, reply.text);
      return reply.body.stack;
    },
    async resources(path, depth = 0) {
      const reply = await s.request<J>('orchestration', `${path}/resources?nested_depth=${depth}`);
      assert.equal(reply.status, 200, reply.text);
      return reply.body.resources;
    },
  };
}

/** Re-checks a condition until it holds; the limit only turns a hang into a failure. */
async function waitFor(what: string, condition: () => Promise<boolean> | boolean, limitMs = 20_000): Promise<void> {
  const giveUp = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > giveUp) assert.fail(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function assertNothingLeft(sim: OpenStackSimulator): void {
  const state = sim.faults.state();
  for (const key of ['stacks', 'servers', 'ports', 'volumes', 'networks', 'subnets', 'serverGroups', 'deployments'] as const) {
    assert.deepEqual(state[key].ids, [], `${key} left behind`);
  }
}

test("heat: a Tacker-like VNF is created, scaled out by PATCH and deleted, with Heat's shapes all along", async (t) => {
  const h = await start(t);
  const { sim, s } = h;
  const created = await s.request<J>('orchestration', '/stacks', {
    method: 'POST',
    body: { stack_name: 'vnf-a', template: VNF, files: { 'VDU1.yaml': VDU1 }, parameters: { nfv: nfv(h.publicNet) }, timeout_mins: 60 },
  });
  assert.equal(created.status, 201, created.text);
  const id = created.body.stack.id;
  const path = `/stacks/vnf-a/${id}`;
  assert.equal(created.body.stack.links[0].rel, 'self');
  assert.equal(created.body.stack.links[0].href, `${s.endpoint('orchestration')}${path}`);
  assert.equal(created.headers.get('location'), created.body.stack.links[0].href);

  // By name, Heat redirects to the stack's canonical URL.
  const byName = await s.request('orchestration', '/stacks/vnf-a', { redirect: 'manual' });
  assert.equal(byName.status, 302);
  assert.equal(byName.headers.get('location'), `${s.endpoint('orchestration')}${path}`);
  const byId = await s.request('orchestration', `/stacks/${id}`, { redirect: 'manual' });
  assert.equal(byId.status, 302);

  await sim.settled();
  const stack = await h.show(path);
  assert.equal(stack.stack_status, 'CREATE_COMPLETE');
  assert.equal(stack.stack_status_reason, 'Stack CREATE completed successfully');
  assert.equal(stack.id, id);
  assert.equal(stack.stack_name, 'vnf-a');
  assert.match(stack.creation_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(stack.updated_time, null);
  assert.equal(stack.disable_rollback, true);
  assert.equal(stack.timeout_mins, 60);
  assert.equal(typeof stack.parameters.nfv, 'string', 'Heat shows parameter values as strings');
  assert.deepEqual(JSON.parse(stack.parameters.nfv), nfv(h.publicNet));
  assert.equal(stack.parameters['OS::stack_id'], id);
  const outputs = Object.fromEntries(stack.outputs.map((o: J) => [o.output_key, o.output_value]));
  assert.equal(outputs.vdu1_ips.length, 1);
  assert.match(outputs.vdu1_ips[0], /^192\.168\.10\.\d+$/);
  assert.match(outputs.vdu2_ip, /^192\.168\.10\.\d+$/);
  assert.equal(outputs.vdu2_label, 'vdu2=VDU2 (m1.small)');
  assert.equal(outputs.flavors, 'm1.tiny,m1.small');

  const events = (await s.request<J>('orchestration', `${path}/events?resource_name=vnf-a`)).body.events.map((e: J) => e.resource_status);
  assert.deepEqual(events, ['CREATE_IN_PROGRESS', 'CREATE_COMPLETE']);

  // Resources, two levels down: the group, its member (a nested stack), the member's server and ports.
  const top = await h.resources(path);
  assert.deepEqual(top.map((r: J) => r.resource_name).sort(), [
    'VDU1',
    'VDU1_scale_out',
    'VDU2',
    'VDU2_CP2',
    'VirtualStorage',
    'anti_affinity_group',
    'internalVL1',
    'internalVL1_subnet',
  ]);
  for (const r of top) {
    assert.equal(r.resource_status, 'CREATE_COMPLETE', r.resource_name);
    assert.equal(r.logical_resource_id, r.resource_name);
    assert.equal(r.parent_resource, undefined);
  }
  const all = await h.resources(path, 2);
  const group = all.find((r: J) => r.resource_name === 'VDU1' && r.resource_type === 'OS::Heat::AutoScalingGroup');
  assert.ok(group.links.some((l: J) => l.rel === 'nested'));
  assert.deepEqual(all.find((r: J) => r.resource_name === 'internalVL1').required_by.sort(), ['VDU1', 'VDU2_CP2', 'internalVL1_subnet']);
  const members = all.filter((r: J) => r.resource_type === 'VDU1.yaml');
  assert.equal(members.length, 1);
  const [member] = members;
  assert.match(member.resource_name, /^[a-z2-7]{12}$/);
  assert.equal(member.parent_resource, 'VDU1');
  const memberStack = member.links.find((l: J) => l.rel === 'nested').href as string;
  assert.ok(memberStack.endsWith(`/${member.physical_resource_id}`), 'a member is a nested stack');
  const inMember = all.filter((r: J) => r.parent_resource === member.resource_name);
  assert.deepEqual(inMember.map((r: J) => `${r.resource_name}:${r.resource_type}`).sort(), [
    'VDU1:OS::Nova::Server',
    'VDU1_CP1:OS::Neutron::Port',
    'VDU1_CP2:OS::Neutron::Port',
  ]);
  const memberServer = inMember.find((r: J) => r.resource_type === 'OS::Nova::Server');
  const stackLink = memberServer.links.find((l: J) => l.rel === 'stack').href as string;
  assert.match(stackLink, new RegExp(`/stacks/vnf-a-VDU1-[a-z2-7]{12}-${member.resource_name}-[a-z2-7]{12}/${member.physical_resource_id}$`));

  // The servers exist in Nova, ACTIVE, with addresses from their ports.
  const vdu1 = (await s.request<J>('compute', `/servers/${memberServer.physical_resource_id}`)).body.server;
  assert.equal(vdu1.status, 'ACTIVE');
  assert.equal(vdu1.name, 'VDU1');
  const internalNet = top.find((r: J) => r.resource_name === 'internalVL1').physical_resource_id;
  const internalName = (await s.request<J>('network', `/v2.0/networks/${internalNet}`)).body.network.name;
  assert.deepEqual(Object.keys(vdu1.addresses).sort(), [internalName, 'public'].sort());
  const cp1 = inMember.find((r: J) => r.resource_name === 'VDU1_CP1');
  const port = (await s.request<J>('network', `/v2.0/ports/${cp1.physical_resource_id}`)).body.port;
  assert.equal(port.device_id, vdu1.id);
  assert.equal(port.network_id, h.publicNet);
  assert.equal(vdu1.addresses.public[0].addr, port.fixed_ips[0].ip_address);
  const vdu2Id = top.find((r: J) => r.resource_name === 'VDU2').physical_resource_id;
  const vdu2 = (await s.request<J>('compute', `/servers/${vdu2Id}`)).body.server;
  assert.equal(vdu2.status, 'ACTIVE');
  assert.equal(vdu2.image, '', 'VDU2 boots from its volume');
  const volumeId = top.find((r: J) => r.resource_name === 'VirtualStorage').physical_resource_id;
  assert.equal((await s.request<J>('volumev3', `/volumes/${volumeId}`)).body.volume.status, 'in-use');
  const shownServer = (await s.request<J>('orchestration', `${path}/resources/VDU2`)).body.resource;
  assert.equal(shownServer.attributes.name, 'VDU2');
  assert.equal(Object.keys(shownServer.attributes.networks).length, 2, 'by network name and by id');

  // The stack's own work time, for benchmarks.
  const work = await send<J>(`${sim.url}/_sim/stacks/${id}/work-time`);
  assert.equal(work.status, 200);
  assert.equal(work.body.stackName, 'vnf-a');
  assert.equal(work.body.actions[0].action, 'CREATE');
  assert.equal(work.body.actions[0].status, 'COMPLETE');
  assert.ok(work.body.actions[0].workMs > 0);

  // Scale out by PATCH: the template and other parameters are kept; the group gets a second member.
  const patched = await s.request('orchestration', path, { method: 'PATCH', body: { parameters: { nfv: nfv(h.publicNet, 2) } } });
  assert.equal(patched.status, 202);
  assert.equal((await h.show(path)).stack_status, 'UPDATE_IN_PROGRESS');
  await sim.settled();
  const updated = await h.show(path);
  assert.equal(updated.stack_status, 'UPDATE_COMPLETE');
  assert.notEqual(updated.updated_time, null);
  assert.equal(updated.outputs.find((o: J) => o.output_key === 'vdu1_ips').output_value.length, 2);
  const after = await h.resources(path, 2);
  const servers = after.filter((r: J) => r.resource_type === 'OS::Nova::Server');
  assert.equal(servers.length, 3);
  assert.ok(
    servers.some((r: J) => r.physical_resource_id === vdu1.id),
    'the first member is kept',
  );
  for (const r of servers) assert.equal((await s.request<J>('compute', `/servers/${r.physical_resource_id}`)).body.server.status, 'ACTIVE');
  assert.equal(after.find((r: J) => r.resource_name === 'VDU2').physical_resource_id, vdu2Id, 'unchanged resources stay');
  const work2 = await send<J>(`${sim.url}/_sim/stacks/${id}/work-time`);
  assert.deepEqual(
    work2.body.actions.map((a: J) => `${a.action}_${a.status}`),
    ['CREATE_COMPLETE', 'UPDATE_COMPLETE'],
  );

  // Delete: gone by name, DELETE_COMPLETE by id, nothing left anywhere.
  assert.equal((await s.request('orchestration', path, { method: 'DELETE' })).status, 204);
  assert.equal((await h.show(path)).stack_status, 'DELETE_IN_PROGRESS');
  await sim.settled();
  const byNameAfter = await s.request<J>('orchestration', '/stacks/vnf-a');
  assert.equal(byNameAfter.status, 404);
  assert.deepEqual(byNameAfter.body.error, { message: 'The Stack (vnf-a) could not be found.', traceback: null, type: 'EntityNotFound' });
  assert.equal(byNameAfter.body.title, 'Not Found');
  const deleted = await h.show(path);
  assert.equal(deleted.stack_status, 'DELETE_COMPLETE');
  assert.equal((await s.request('orchestration', path, { method: 'DELETE' })).status, 404);
  assert.deepEqual((await s.request<J>('orchestration', '/stacks')).body.stacks, []);
  assertNothingLeft(sim);
});

test('heat: templates are validated before 201 — unknown types, missing files and parameters, bad references, cycles, images', async (t) => {
  const h = await start(t);
  const post = (body: Record<string, unknown>) => h.s.request<J>('orchestration', '/stacks', { method: 'POST', body: { stack_name: 'bad', ...body } });
  const cases: Array<[Record<string, unknown>, number, string, RegExp]> = [
    [
      { template: { heat_template_version: '2018-08-31', resources: { x: { type: 'OS::Foo::Bar' } } } },
      400,
      'StackValidationFailed',
      /^The Resource Type \(OS::Foo::Bar\) could not be found\.$/,
    ],
    [{ template: VNF, parameters: { nfv: nfv(h.publicNet) } }, 400, 'StackValidationFailed', /Could not fetch remote template "VDU1\.yaml"/],
    [{ template: VNF, files: { 'VDU1.yaml': VDU1 } }, 400, 'UserParameterMissing', /^The Parameter \(nfv\) was not provided\.$/],
    [
      { template: VNF, files: { 'VDU1.yaml': VDU1 }, parameters: { nfv: nfv(h.publicNet), extra: 1 } },
      400,
      'UnknownUserParameter',
      /^The Parameter \(extra\) was not defined in template\.$/,
    ],
    [
      { template: { heat_template_version: '2018-08-31', resources: { p: { type: 'OS::Neutron::Port', properties: { network: { get_resource: 'nope' } } } } } },
      400,
      'InvalidTemplateReference',
      /The specified reference "nope" \(in p\) is incorrect\./,
    ],
    [
      {
        template: {
          heat_template_version: '2018-08-31',
          resources: { a: { type: 'OS::Heat::None', depends_on: 'b' }, b: { type: 'OS::Heat::None', depends_on: 'a' } },
        },
      },
      400,
      'CircularDependencyException',
      /^Circular Dependency Found/,
    ],
    [
      {
        template: {
          heat_template_version: '2018-08-31',
          resources: { v: { type: 'OS::Nova::Server', properties: { image: 'no-such-image', flavor: 'm1.tiny' } } },
        },
      },
      400,
      'StackValidationFailed',
      /resources\.v\.properties\.image: Error validating value 'no-such-image'/,
    ],
    [
      {
        template: {
          heat_template_version: '2018-08-31',
          resources: { v: { type: 'OS::Nova::Server', properties: { image: IMAGE, flavor: 'm1.tiny', colour: 'red' } } },
        },
      },
      400,
      'StackValidationFailed',
      /^Property error: resources\.v\.properties: Unknown Property colour$/,
    ],
    [{ template: { heat_template_version: '2012-01-01', resources: {} } }, 400, 'InvalidTemplateVersion', /The template version is invalid/],
    [
      { template: VNF, files: { 'VDU1.yaml': VDU1 }, parameters: { nfv: { VDU: { VDU1: { desired_capacity: 5 } } } } },
      400,
      'StackValidationFailed',
      /desired_capacity must be between 1 and 3/,
    ],
  ];
  for (const [body, status, type, message] of cases) {
    const reply = await post(body);
    assert.equal(reply.status, status, reply.text);
    assert.equal(reply.body.code, status);
    assert.equal(reply.body.error.type, type, reply.text);
    assert.match(reply.body.error.message, message);
  }
  const ok = await post({ template: { heat_template_version: '2018-08-31', resources: { n: { type: 'OS::Heat::None' } } } });
  assert.equal(ok.status, 201);
  const duplicate = await post({ template: { heat_template_version: '2018-08-31', resources: {} } });
  assert.equal(duplicate.status, 409);
  assert.equal(duplicate.body.error.type, 'StackExists');
  assert.equal(
    (await h.s.request('orchestration', '/stacks', { method: 'POST', body: { stack_name: '1bad', template: { heat_template_version: '2018-08-31' } } })).status,
    400,
  );
});

test('heat: intrinsic functions — get_param list paths, str_replace, list_join, if/equals conditions, repeat, get_file, map_merge', async (t) => {
  const h = await start(t);
  const template = {
    heat_template_version: '2018-08-31',
    parameters: {
      nfv: { type: 'json' },
      names: { type: 'comma_delimited_list', default: 'a,b,c' },
      env: { type: 'string', default: 'prod', constraints: [{ allowed_values: ['prod', 'test'] }] },
      count: { type: 'number', default: '2' },
    },
    conditions: { is_prod: { equals: [{ get_param: 'env' }, 'prod'] } },
    resources: {
      v: { type: 'OS::Heat::Value', properties: { value: { get_param: ['nfv', 'VDU', 'VDU1', 'vcImageId'] } } },
      only_test: { type: 'OS::Heat::None', condition: { not: 'is_prod' } },
    },
    outputs: {
      image: { value: { get_attr: ['v', 'value'] } },
      missing: { value: { get_param: ['nfv', 'VDU', 'VDU9', 'vcImageId'] } },
      second: { value: { get_param: ['names', 1] } },
      joined: { value: { list_join: ['-', { get_param: 'names' }, ['d']] } },
      replaced: { value: { str_replace: { template: 'host-$N.$D', params: { $N: { get_param: 'count' }, $D: 'example' } } } },
      mode: { value: { if: ['is_prod', 'production', 'testing'] } },
      repeated: { value: { repeat: { for_each: { '<%n%>': { get_param: 'names' } }, template: 'port-<%n%>' } } },
      file: { value: { get_file: 'motd.txt' } },
      merged: { value: { map_merge: [{ a: 1 }, { b: 2 }, { a: 3 }] } },
      test_only: { value: { get_resource: 'only_test' } },
      stack: { value: { get_param: 'OS::stack_name' } },
    },
  };
  const { path } = await h.create('fn', { template, files: { 'motd.txt': 'hello' }, parameters: { nfv: JSON.stringify(nfv(h.publicNet)) } });
  await h.sim.settled();
  const stack = await h.show(path);
  assert.equal(stack.stack_status, 'CREATE_COMPLETE', stack.stack_status_reason);
  const out = Object.fromEntries(stack.outputs.map((o: J) => [o.output_key, o.output_value]));
  assert.deepEqual(out, {
    image: IMAGE,
    missing: '',
    second: 'b',
    joined: 'a-b-c-d',
    replaced: 'host-2.example',
    mode: 'production',
    repeated: ['port-a', 'port-b', 'port-c'],
    file: 'hello',
    merged: { a: 3, b: 2 },
    test_only: null,
    stack: 'fn',
  });
  assert.deepEqual(
    (await h.resources(path)).map((r: J) => r.resource_name),
    ['v'],
    'a resource whose condition is false does not exist',
  );
  const bad = await h.s.request<J>('orchestration', '/stacks', {
    method: 'POST',
    body: { stack_name: 'fn2', template, files: { 'motd.txt': '' }, parameters: { nfv: {}, env: 'dev' } },
  });
  assert.equal(bad.status, 400);
  assert.match(bad.body.error.message, /^Parameter 'env' is invalid: "dev" is not an allowed value/);
});

test('heat: an injected stack-create-fail fails the stack with the given reason; delete cleans up what was made', async (t) => {
  const h = await start(t);
  const fault = await send(`${h.sim.url}/_sim/faults`, {
    method: 'POST',
    body: { kind: 'stack-create-fail', reason: 'Resource CREATE failed: Error: resources.VDU2: boom', count: 1 },
  });
  assert.equal(fault.status, 201);
  const { path } = await h.create('vnf-f', { template: VNF, files: { 'VDU1.yaml': VDU1 }, parameters: { nfv: nfv(h.publicNet) } });
  await h.sim.settled();
  const stack = await h.show(path);
  assert.equal(stack.stack_status, 'CREATE_FAILED');
  assert.equal(stack.stack_status_reason, 'Resource CREATE failed: Error: resources.VDU2: boom');
  const failed = (await h.resources(path)).filter((r: J) => r.resource_status === 'CREATE_FAILED');
  assert.equal(failed.length, 1);
  assert.ok(h.sim.faults.state().ports.count > 0, 'resources created before the failure exist');

  // The fault was used up: the next stack is fine.
  const { path: next } = await h.create('vnf-g', { template: { heat_template_version: '2018-08-31', resources: { n: { type: 'OS::Heat::None' } } } });
  await h.sim.settled();
  assert.equal((await h.show(next)).stack_status, 'CREATE_COMPLETE');

  // By name, a DELETE is redirected to the stack's URL like any other method.
  const byName = await h.s.request('orchestration', '/stacks/vnf-f', { method: 'DELETE', redirect: 'manual' });
  assert.equal(byName.status, 302);
  assert.equal((await h.s.request('orchestration', '/stacks/vnf-f', { method: 'DELETE' })).status, 204);
  await h.s.request('orchestration', next, { method: 'DELETE' });
  await h.sim.settled();
  assert.equal((await h.show(path)).stack_status, 'DELETE_COMPLETE');
  assertNothingLeft(h.sim);
});

test("heat: a member server that goes to ERROR fails the stack with Heat's reason chain (after Heat's retries)", async (t) => {
  const h = await start(t);
  // Heat re-creates a server that went to ERROR up to action_retry_limit (5) times: 6 failures fail it.
  h.sim.faults.inject({ kind: 'server-error', count: 6 });
  const template = VNF.replace(/ {2}VDU2:[\s\S]*?(?= {2}VirtualStorage:)/, '').replace(/ {2}vdu2_ip:[\s\S]*$/, '');
  const { path } = await h.create('vnf-e', { template, files: { 'VDU1.yaml': VDU1 }, parameters: { nfv: nfv(h.publicNet) } });
  await h.sim.settled();
  const stack = await h.show(path);
  assert.equal(stack.stack_status, 'CREATE_FAILED');
  assert.match(
    stack.stack_status_reason,
    /^Resource CREATE failed: ResourceInError: resources\.VDU1\.resources\.[a-z2-7]{12}\.resources\.VDU1: Went to status ERROR due to "Message: No valid host was found\. , Code: 500"$/,
  );
  const all = await h.resources(path, 2);
  const group = all.find((r: J) => r.resource_name === 'VDU1' && r.parent_resource === undefined);
  assert.equal(group.resource_status, 'CREATE_FAILED');
  const server = all.find((r: J) => r.resource_type === 'OS::Nova::Server');
  assert.equal(server.resource_status, 'CREATE_FAILED');
  assert.match(server.resource_status_reason, /^ResourceInError: resources\.VDU1: Went to status ERROR/);
  const nova = (await h.s.request<J>('compute', `/servers/${server.physical_resource_id}`)).body.server;
  assert.equal(nova.status, 'ERROR');
  assert.equal(nova.fault.message, 'No valid host was found. ');

  // One failure only: Heat's retry creates the server again and the stack completes.
  h.sim.faults.inject({ kind: 'server-error', count: 1 });
  const { path: retried } = await h.create('vnf-r', { template, files: { 'VDU1.yaml': VDU1 }, parameters: { nfv: nfv(h.publicNet) } });
  await h.sim.settled();
  assert.equal((await h.show(retried)).stack_status, 'CREATE_COMPLETE');
  assert.equal(h.sim.faults.state().servers.items.filter((x) => x.status === 'ACTIVE').length, 1);
});

test('heat: a SoftwareDeployment keeps the stack CREATE_IN_PROGRESS until signalled (or fails, or times out)', async (t) => {
  const h = await start(t, { timeScale: 0.001 });
  const template = (timeout?: boolean) => ({
    heat_template_version: '2018-08-31',
    resources: {
      srv: { type: 'OS::Nova::Server', properties: { image: IMAGE, flavor: 'm1.tiny', networks: [{ network: 'public' }] } },
      cfg: { type: 'OS::Heat::SoftwareConfig', properties: { group: 'script', config: '#!/bin/sh\necho configured', outputs: [{ name: 'result' }] } },
      dep: {
        type: 'OS::Heat::SoftwareDeployment',
        properties: { config: { get_resource: 'cfg' }, server: { get_resource: 'srv' }, ...(timeout ? { signal_transport: 'HEAT_SIGNAL' } : {}) },
      },
    },
    outputs: { stdout: { value: { get_attr: ['dep', 'deploy_stdout'] } }, result: { value: { get_attr: ['dep', 'result'] } } },
  });
  const deploymentOf = (stackId: string) => h.sim.faults.state().deployments.items.find((d) => d.stackId === stackId);

  const ok = await h.create('sd-ok', { template: template() });
  await h.sim.settled();
  assert.equal((await h.show(ok.path)).stack_status, 'CREATE_IN_PROGRESS', 'settled while waiting for the signal');
  const waiting = deploymentOf(ok.id);
  assert.equal(waiting?.state, 'waiting');
  const dep = (await h.resources(ok.path)).find((r: J) => r.resource_name === 'dep');
  assert.equal(dep.resource_status, 'CREATE_IN_PROGRESS');
  assert.equal(dep.physical_resource_id, waiting?.id);
  const signalled = await send(`${h.sim.url}/_sim/signal/${waiting?.id}`, {
    method: 'POST',
    body: { deploy_stdout: 'configured', deploy_status_code: 0, result: 'fine' },
  });
  assert.equal(signalled.status, 200);
  await h.sim.settled();
  const done = await h.show(ok.path);
  assert.equal(done.stack_status, 'CREATE_COMPLETE');
  assert.deepEqual(Object.fromEntries(done.outputs.map((o: J) => [o.output_key, o.output_value])), { stdout: 'configured', result: 'fine' });

  const bad = await h.create('sd-bad', { template: template() });
  await waitFor('the deployment to wait', () => deploymentOf(bad.id)?.state === 'waiting');
  assert.ok(h.sim.faults.signal(deploymentOf(bad.id)?.id ?? '', { deploy_status_code: 2, deploy_stderr: 'oops' }));
  await h.sim.settled();
  const failed = await h.show(bad.path);
  assert.equal(failed.stack_status, 'CREATE_FAILED');
  assert.equal(
    failed.stack_status_reason,
    'Resource CREATE failed: Error: resources.dep: Deployment to server failed: deploy_status_code : Deployment exited with non-zero status code: 2',
  );

  // Never signalled: timeout_mins (scaled like every delay) fails the stack.
  const late = await h.create('sd-late', { template: template(true), timeout_mins: 1 });
  await waitFor('the stack timeout', async () => (await h.show(late.path)).stack_status !== 'CREATE_IN_PROGRESS');
  const timedOut = await h.show(late.path);
  assert.equal(timedOut.stack_status, 'CREATE_FAILED');
  assert.equal(timedOut.stack_status_reason, 'Timed out');

  // Deleting a stack whose deployment still waits cancels the wait and removes everything.
  const pending = await h.create('sd-pending', { template: template() });
  await waitFor('the deployment to wait', () => deploymentOf(pending.id)?.state === 'waiting');
  assert.equal((await h.s.request('orchestration', pending.path, { method: 'DELETE' })).status, 204);
  for (const stack of [ok, bad, late]) await h.s.request('orchestration', stack.path, { method: 'DELETE' });
  await h.sim.settled();
  assert.equal((await h.show(pending.path)).stack_status, 'DELETE_COMPLETE');
  assertNothingLeft(h.sim);
});

test("heat: injected 5xx answers in Heat's error shape; the API keeps working after the count", async (t) => {
  const h = await start(t);
  await send(`${h.sim.url}/_sim/faults`, { method: 'POST', body: { kind: 'http-5xx', service: 'heat', count: 2 } });
  for (let i = 0; i < 2; i++) {
    const reply = await h.s.request<J>('orchestration', '/stacks');
    assert.equal(reply.status, 500);
    assert.equal(reply.body.code, 500);
    assert.equal(reply.body.title, 'Internal Server Error');
    assert.equal(typeof reply.body.error.message, 'string');
  }
  assert.equal((await h.s.request('orchestration', '/stacks')).status, 200);
  // Only creates fail, three times, then a create goes through.
  await send(`${h.sim.url}/_sim/faults`, {
    method: 'POST',
    body: { kind: 'http-5xx', service: 'orchestration', method: 'POST', path: '/stacks', count: 1, status: 502 },
  });
  const body = { stack_name: 'later', template: { heat_template_version: '2018-08-31', resources: {} } };
  assert.equal((await h.s.request('orchestration', '/stacks', { method: 'POST', body })).status, 502);
  assert.equal((await h.s.request('orchestration', '/stacks', { method: 'POST', body })).status, 201);
});

test('heat: mark_unhealthy then an update replaces the server (heal); image changes rebuild in place unless REPLACE', async (t) => {
  const h = await start(t);
  const template = (image: string, policy?: string) => ({
    heat_template_version: '2018-08-31',
    resources: {
      srv: {
        type: 'OS::Nova::Server',
        properties: { name: 'vm', image, flavor: 'm1.tiny', networks: [{ network: 'public' }], ...(policy ? { image_update_policy: policy } : {}) },
      },
    },
  });
  const upload = async (name: string) => {
    const image = (await h.s.request<J>('image', '/v2/images', { method: 'POST', body: { name, disk_format: 'qcow2', container_format: 'bare' } })).body;
    await h.s.request('image', `/v2/images/${image.id}/file`, {
      method: 'PUT',
      raw: `data of ${name}`,
      headers: { 'content-type': 'application/octet-stream' },
    });
    return image.id as string;
  };
  const { path } = await h.create('heal', { template: template(IMAGE) });
  await h.sim.settled();
  const before = (await h.resources(path))[0];

  const marked = await h.s.request<J>('orchestration', `${path}/resources/srv`, {
    method: 'PATCH',
    body: { mark_unhealthy: true, resource_status_reason: 'VNFC heal' },
  });
  assert.equal(marked.status, 200);
  const unhealthy = (await h.resources(path))[0];
  assert.equal(unhealthy.resource_status, 'CHECK_FAILED');
  assert.equal(unhealthy.resource_status_reason, 'VNFC heal');
  assert.equal((await h.s.request('orchestration', path, { method: 'PATCH', body: {} })).status, 202);
  await h.sim.settled();
  assert.equal((await h.show(path)).stack_status, 'UPDATE_COMPLETE');
  const healed = (await h.resources(path))[0];
  assert.equal(healed.resource_status, 'CREATE_COMPLETE');
  assert.notEqual(healed.physical_resource_id, before.physical_resource_id, 'a new server');
  assert.equal((await h.s.request('compute', `/servers/${before.physical_resource_id}`)).status, 404, 'the old one is gone');

  // A new image: Heat's default image_update_policy REBUILD keeps the server.
  const v2 = await upload('v2');
  await h.s.request('orchestration', path, { method: 'PUT', body: { template: template(v2) } });
  await h.sim.settled();
  const rebuilt = (await h.resources(path))[0];
  assert.equal(rebuilt.resource_status, 'UPDATE_COMPLETE');
  assert.equal(rebuilt.physical_resource_id, healed.physical_resource_id);
  assert.equal((await h.s.request<J>('compute', `/servers/${rebuilt.physical_resource_id}`)).body.server.image.id, v2);

  // With image_update_policy REPLACE, a new image means a new server.
  const v3 = await upload('v3');
  await h.s.request('orchestration', path, { method: 'PUT', body: { template: template(v2, 'REPLACE') } });
  await h.sim.settled();
  await h.s.request('orchestration', path, { method: 'PUT', body: { template: template(v3, 'REPLACE') } });
  await h.sim.settled();
  const replaced = (await h.resources(path))[0];
  assert.notEqual(replaced.physical_resource_id, rebuilt.physical_resource_id);
  assert.equal((await h.s.request<J>('compute', `/servers/${replaced.physical_resource_id}`)).body.server.image.id, v3);
  assert.equal(h.sim.faults.state().servers.count, 1);
  assert.equal((await h.s.request<J>('orchestration', path, { method: 'PATCH', body: { parameters: { nope: 1 } } })).status, 400);
});

test('heat: ResourceGroup count up and down; a ScalingPolicy signal grows the group without touching the parent', async (t) => {
  const h = await start(t);
  const rg = (count: number) => ({
    heat_template_version: '2018-08-31',
    resources: {
      grp: {
        type: 'OS::Heat::ResourceGroup',
        properties: { count, resource_def: { type: 'OS::Neutron::Port', properties: { network: 'public', name: 'port-%index%' } } },
      },
    },
    outputs: { names: { value: { get_attr: ['grp', 'name'] } }, first: { value: { get_attr: ['grp', 'resource.0', 'name'] } } },
  });
  const { path } = await h.create('rg', { template: rg(3) });
  await h.sim.settled();
  const out = (await h.show(path)).outputs;
  assert.deepEqual(out.find((o: J) => o.output_key === 'names').output_value, ['port-0', 'port-1', 'port-2']);
  assert.equal(out.find((o: J) => o.output_key === 'first').output_value, 'port-0');
  await h.s.request('orchestration', path, { method: 'PUT', body: { template: rg(1) } });
  await h.sim.settled();
  assert.deepEqual((await h.show(path)).outputs.find((o: J) => o.output_key === 'names').output_value, ['port-0'], 'the highest indexes go');
  assert.equal(h.sim.faults.state().ports.count, 1);

  const asg = {
    heat_template_version: '2018-08-31',
    resources: {
      asg: {
        type: 'OS::Heat::AutoScalingGroup',
        properties: { min_size: 1, max_size: 3, desired_capacity: 1, resource: { type: 'OS::Heat::RandomString', properties: { length: 8 } } },
      },
      out: {
        type: 'OS::Heat::ScalingPolicy',
        properties: { adjustment_type: 'change_in_capacity', auto_scaling_group_id: { get_resource: 'asg' }, scaling_adjustment: 5 },
      },
    },
    outputs: { size: { value: { get_attr: ['asg', 'current_size'] } }, url: { value: { get_attr: ['out', 'signal_url'] } } },
  };
  const scaled = await h.create('asg', { template: asg });
  await h.sim.settled();
  const before = await h.show(scaled.path);
  assert.equal(before.outputs.find((o: J) => o.output_key === 'size').output_value, 1);
  const url = before.outputs.find((o: J) => o.output_key === 'url').output_value as string;
  assert.ok(url.endsWith(`${scaled.path}/resources/out/signal`));
  assert.equal((await h.s.request('orchestration', `${scaled.path}/resources/out/signal`, { method: 'POST', body: {} })).status, 200);
  await h.sim.settled();
  const afterSignal = await h.show(scaled.path);
  assert.equal(afterSignal.stack_status, 'CREATE_COMPLETE', 'the parent stays as it was');
  assert.equal(afterSignal.outputs.find((o: J) => o.output_key === 'size').output_value, 3, 'clamped to max_size');
  const nested = (await h.resources(scaled.path)).find((r: J) => r.resource_name === 'asg');
  const nestedLink = new URL(nested.links.find((l: J) => l.rel === 'nested').href).pathname.split('/').slice(-2).join('/');
  assert.equal((await h.show(`/stacks/${nestedLink}`)).stack_status, 'UPDATE_COMPLETE');
});

test('heat: an injected delete failure leaves DELETE_FAILED; deleting again finishes the job', async (t) => {
  const h = await start(t);
  const { path } = await h.create('del', {
    template: {
      heat_template_version: '2018-08-31',
      resources: {
        net: { type: 'OS::Neutron::Net' },
        sub: { type: 'OS::Neutron::Subnet', properties: { network: { get_resource: 'net' }, cidr: '10.1.0.0/24' } },
      },
    },
  });
  await h.sim.settled();
  h.sim.faults.inject({ kind: 'stack-delete-fail', reason: 'Resource DELETE failed: Conflict: resources.sub: still in use' });
  await h.s.request('orchestration', path, { method: 'DELETE' });
  await h.sim.settled();
  const failed = await h.show(path);
  assert.equal(failed.stack_status, 'DELETE_FAILED');
  assert.equal(failed.stack_status_reason, 'Resource DELETE failed: Conflict: resources.sub: still in use');
  assert.equal((await h.s.request('orchestration', '/stacks/del', { redirect: 'manual' })).status, 302, 'still there');
  assert.equal((await h.s.request('orchestration', path, { method: 'DELETE' })).status, 204);
  await h.sim.settled();
  assert.equal((await h.show(path)).stack_status, 'DELETE_COMPLETE');
  assertNothingLeft(h.sim);
});

test('heat: a new image for a scaling group rebuilds its members in place, one batch at a time', async (t) => {
  const h = await start(t);
  const { s, sim } = h;
  const image = (await s.request<J>('image', '/v2/images', { method: 'POST', body: { name: 'vdu1-v2', disk_format: 'qcow2', container_format: 'bare' } })).body;
  await s.request('image', `/v2/images/${image.id}/file`, { method: 'PUT', raw: 'v2', headers: { 'content-type': 'application/octet-stream' } });
  const { path } = await h.create('vnf-up', { template: VNF, files: { 'VDU1.yaml': VDU1 }, parameters: { nfv: nfv(h.publicNet, 2) } });
  await sim.settled();
  const vdu1Servers = async () =>
    (await h.resources(path, 2))
      .filter((r: J) => r.resource_type === 'OS::Nova::Server' && r.parent_resource !== undefined)
      .map((r: J) => r.physical_resource_id as string)
      .sort();
  const before = await vdu1Servers();
  assert.equal(before.length, 2);

  const params = nfv(h.publicNet, 2) as J;
  params.VDU.VDU1.vcImageId = image.id;
  await s.request('orchestration', path, { method: 'PATCH', body: { parameters: { nfv: params } } });
  await sim.settled();
  assert.equal((await h.show(path)).stack_status, 'UPDATE_COMPLETE');
  assert.deepEqual(await vdu1Servers(), before, 'rebuilt, not replaced (image_update_policy REBUILD)');
  for (const id of before) assert.equal((await s.request<J>('compute', `/servers/${id}`)).body.server.image.id, image.id);

  // The group's nested stack went through one update per member (max_batch_size 1), then the resize.
  const group = (await h.resources(path)).find((r: J) => r.resource_name === 'VDU1');
  const nested = new URL(group.links.find((l: J) => l.rel === 'nested').href).pathname.split('/').slice(-2).join('/');
  const events = (await s.request<J>('orchestration', `/stacks/${nested}/events?resource_status=UPDATE_COMPLETE`)).body.events;
  assert.equal(events.filter((e: J) => e.resource_type === 'OS::Heat::Stack').length, 3);
});

test('heat: Tacker-style heal and scale-in through nested stacks: mark_unhealthy inside, then update the parent', async (t) => {
  const h = await start(t);
  const { s, sim } = h;
  const { path } = await h.create('vnf-heal', { template: VNF, files: { 'VDU1.yaml': VDU1 }, parameters: { nfv: nfv(h.publicNet, 3) } });
  await sim.settled();
  const stackPathOf = (r: J) => new URL(r.links.find((l: J) => l.rel === 'stack').href).pathname.split('/').slice(-2).join('/');
  const all = await h.resources(path, 2);
  const servers = all.filter((r: J) => r.resource_type === 'OS::Nova::Server' && r.parent_resource !== undefined);
  assert.equal(servers.length, 3);

  // Heal one VNFC: mark its server unhealthy in the member's own stack, then PATCH the parent.
  const [sick] = servers;
  const marked = await s.request('orchestration', `/stacks/${stackPathOf(sick)}/resources/VDU1`, {
    method: 'PATCH',
    body: { mark_unhealthy: true, resource_status_reason: 'heal' },
  });
  assert.equal(marked.status, 200);
  await s.request('orchestration', path, { method: 'PATCH', body: {} });
  await sim.settled();
  assert.equal((await h.show(path)).stack_status, 'UPDATE_COMPLETE');
  const healed = (await h.resources(path, 2)).filter((r: J) => r.resource_type === 'OS::Nova::Server' && r.parent_resource !== undefined);
  assert.equal(healed.length, 3);
  assert.ok(!healed.some((r: J) => r.physical_resource_id === sick.physical_resource_id), 'the sick server was replaced');
  assert.equal(healed.filter((r: J) => servers.some((o: J) => o.physical_resource_id === r.physical_resource_id)).length, 2, 'the others stay');

  // Scale in choosing the VNFC: mark its member unhealthy in the group's stack, lower desired_capacity.
  const members = (await h.resources(path, 1)).filter((r: J) => r.resource_type === 'VDU1.yaml');
  const victim = members[2];
  const victimServer = (
    await h.resources(`/stacks/${new URL(victim.links.find((l: J) => l.rel === 'nested').href).pathname.split('/').slice(-2).join('/')}`)
  ).find((r: J) => r.resource_name === 'VDU1');
  await s.request('orchestration', `/stacks/${stackPathOf(victim)}/resources/${victim.resource_name}`, { method: 'PATCH', body: { mark_unhealthy: true } });
  await s.request('orchestration', path, { method: 'PATCH', body: { parameters: { nfv: nfv(h.publicNet, 2) } } });
  await sim.settled();
  const left = (await h.resources(path, 1)).filter((r: J) => r.resource_type === 'VDU1.yaml');
  assert.deepEqual(
    left.map((r: J) => r.resource_name).sort(),
    members
      .filter((m: J) => m !== victim)
      .map((m: J) => m.resource_name)
      .sort(),
  );
  assert.equal((await s.request('compute', `/servers/${victimServer.physical_resource_id}`)).status, 404);
});

test("heat: a quota refusal fails the stack with the client's Forbidden, without retries", async (t) => {
  const h = await start(t);
  h.sim.faults.inject({ kind: 'quota', instances: 0 });
  const { path } = await h.create('quota', {
    template: { heat_template_version: '2018-08-31', resources: { srv: { type: 'OS::Nova::Server', properties: { image: IMAGE, flavor: 'm1.tiny' } } } },
  });
  await h.sim.settled();
  const stack = await h.show(path);
  assert.equal(stack.stack_status, 'CREATE_FAILED');
  assert.match(
    stack.stack_status_reason,
    /^Resource CREATE failed: Forbidden: resources\.srv: Quota exceeded for instances: Requested 1, but already used 0 of 0 instances \(HTTP 403\) \(Request-ID: req-[0-9a-f-]{36}\)$/,
  );
});
