// The Tacker CLI (python3-tackerclient, `openstack vnflcm ...` and `openstack vnf package ...`)
// against the local runtime, as an operator would use it. CI installs
// the CLI and sets VNFM_REQUIRE_TACKER_CLI=1 so this never silently skips there.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { accessToken, adminCredentials, seedPackage, settle, startVnfm, type LocalVnfm } from '../support/runtime.ts';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';

const run = promisify(execFile);
const hasCli = await run('openstack', ['--version']).then(
  () => true,
  () => false,
);
const required = process.env.VNFM_REQUIRE_TACKER_CLI === '1';
const skip = !hasCli && !required ? 'the openstack CLI (python3-tackerclient) is not installed' : false;

let vnfm: LocalVnfm;
before(async () => {
  if (skip) return;
  vnfm = await startVnfm();
});
after(async () => {
  await vnfm?.stop();
});

/**
 * The CLI authenticated as an operator would (README, "Security model"): keystoneauth1's
 * `admin_token` sends the access token as X-Auth-Token; `http_basic` sends the client id and
 * secret as HTTP Basic. `none` sends nothing.
 */
function cli(auth: 'admin_token' | 'http_basic' | 'none') {
  return async (...args: string[]): Promise<string> => {
    const admin = adminCredentials(vnfm);
    const credentials =
      auth === 'admin_token'
        ? ['--os-auth-type', 'admin_token', `--os-token=${await accessToken(admin)}`]
        : auth === 'http_basic'
          ? // A secret may begin with "-" (base64url): joined to its option, the parser cannot take it for one.
            ['--os-auth-type', 'http_basic', '--os-username', admin.clientId, `--os-password=${admin.clientSecret}`]
          : ['--os-auth-type', 'none'];
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OS_')));
    const { stdout } = await run('openstack', [...credentials, '--os-endpoint', vnfm.url, ...args], { env });
    return stdout;
  };
}
const openstack = cli('admin_token');

it('refuses the Tacker CLI without credentials, and accepts it with admin_token and http_basic', { skip }, async () => {
  await assert.rejects(cli('none')('vnflcm', 'list', '-f', 'json'), /401|Unauthorized|access token/);
  for (const auth of ['admin_token', 'http_basic'] as const) {
    assert.ok(Array.isArray(JSON.parse(await cli(auth)('vnflcm', 'list', '-f', 'json'))), auth);
    assert.ok(Array.isArray(JSON.parse(await cli(auth)('vnf', 'package', 'list', '-f', 'json'))), auth);
  }
});

it('supports the Tacker CLI v1 sequence: create, list, show, update, op list, delete', { skip }, async () => {
  const pkg = await seedPackage(vnfm);
  const created = JSON.parse(await openstack('vnflcm', 'create', pkg.vnfdId, '--name', 'cli-vnf', '--description', 'from the CLI', '-f', 'json')) as Record<
    string,
    string
  >;
  const id = created.ID as string;
  assert.match(id, /^[0-9a-f-]{36}$/);
  assert.equal(created['Instantiation State'], 'NOT_INSTANTIATED');

  const listed = JSON.parse(await openstack('vnflcm', 'list', '-f', 'json')) as Array<Record<string, string>>;
  assert.ok(listed.some((row) => row.ID === id && row['VNF Instance Name'] === 'cli-vnf'));

  const params = join(vnfm.dataDir, 'update.json');
  writeFileSync(
    params,
    JSON.stringify({
      vnfInstanceName: 'renamed',
      vimConnectionInfo: [{ id: 'vim1', vimId: 'v1', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.v_2', accessInfo: { password: 'cli-secret-pw' } }],
    }),
  );
  await openstack('vnflcm', 'update', id, '--I', params);
  await settle(vnfm);
  const occs = JSON.parse(await openstack('vnflcm', 'op', 'list', '-f', 'json')) as Array<Record<string, string>>;
  assert.ok(occs.some((row) => row['VNF Instance ID'] === id && row.Operation === 'MODIFY_INFO' && row['Operation State'] === 'COMPLETED'));

  const shown = await openstack('vnflcm', 'show', id, '-f', 'json');
  const fields = JSON.parse(shown) as Record<string, unknown>;
  assert.equal(fields['VNF Instance Name'], 'renamed');
  assert.ok(!shown.includes('cli-secret-pw'));

  assert.match(await openstack('vnflcm', 'delete', id), /deleted successfully/);
  const after = JSON.parse(await openstack('vnflcm', 'list', '-f', 'json')) as Array<Record<string, string>>;
  assert.ok(!after.some((row) => row.ID === id));
  assert.ok(!vnfm.output().includes('cli-secret-pw'));
});

it('supports the Tacker CLI package sequence (http_basic): create, upload, show, download, artifact, update, delete', { skip }, async () => {
  const openstack = cli('http_basic');
  const csar = await buildCsar('openstack-vnf-v2');
  const csarPath = join(vnfm.dataDir, 'vnf.zip');
  writeFileSync(csarPath, csar);
  const created = JSON.parse(await openstack('vnf', 'package', 'create', '--user-data', 'owner=ops', '-f', 'json')) as Record<string, unknown>;
  const id = created.ID as string;
  assert.equal(created['Onboarding State'], 'CREATED');
  assert.match(await openstack('vnf', 'package', 'upload', '--path', csarPath, id), /accepted/);
  await settle(vnfm);
  const shown = JSON.parse(await openstack('vnf', 'package', 'show', id, '-f', 'json')) as Record<string, unknown>;
  assert.equal(shown['Onboarding State'], 'ONBOARDED');
  assert.equal(shown['VNFD ID'], SAMPLE_PACKAGES['openstack-vnf-v2'].vnfdId);

  const downloaded = join(vnfm.dataDir, 'downloaded.zip');
  await openstack('vnf', 'package', 'download', '--file', downloaded, id);
  assert.ok(readFileSync(downloaded).equals(csar));
  const vnfd = join(vnfm.dataDir, 'vnfd.zip');
  await openstack('vnf', 'package', 'download', '--vnfd', '--file', vnfd, id);
  assert.equal(readFileSync(vnfd).readUInt32LE(0), 0x04034b50);
  const script = join(vnfm.dataDir, 'script.py');
  await openstack('vnf', 'package', 'artifact', 'download', id, 'Scripts/sample_script.py', '--file', script);
  assert.match(readFileSync(script, 'utf8'), /pickle\.load\(sys\.stdin\.buffer\)/);

  assert.match(await openstack('vnf', 'package', 'update', '--operational-state', 'DISABLED', id), /DISABLED/);
  assert.match(await openstack('vnf', 'package', 'delete', id), /deleted successfully/);
  const listed = JSON.parse(await openstack('vnf', 'package', 'list', '-f', 'json')) as Array<Record<string, unknown>>;
  assert.ok(!listed.some((row) => row.Id === id));
});

it('supports the Tacker CLI LCM sequence: instantiate with a parameter file, change-ext-conn (v1 and v2), terminate', { skip }, async () => {
  const csarPath = join(vnfm.dataDir, 'vnf-v1.zip');
  writeFileSync(csarPath, await buildCsar('openstack-vnf-v1'));
  const pkg = (JSON.parse(await openstack('vnf', 'package', 'create', '-f', 'json')) as Record<string, string>).ID as string;
  await openstack('vnf', 'package', 'upload', '--path', csarPath, pkg);
  await settle(vnfm);
  const id = (JSON.parse(await openstack('vnflcm', 'create', SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId, '-f', 'json')) as Record<string, string>).ID as string;
  // The v1 (SOL003 V2.6.1) request shape Tacker's users write: cpConfig as an array.
  const params = join(vnfm.dataDir, 'instantiate.json');
  writeFileSync(
    params,
    JSON.stringify({
      flavourId: 'simple',
      extVirtualLinks: [
        { id: 'ext', resourceId: 'public', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: [{ cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] }] }] },
      ],
    }),
  );
  assert.match(await openstack('vnflcm', 'instantiate', id, params), /accepted/);
  await settle(vnfm);
  const shown = JSON.parse(await openstack('vnflcm', 'show', id, '-f', 'json')) as Record<string, unknown>;
  assert.equal(shown['Instantiation State'], 'INSTANTIATED');

  // change-ext-conn with parameter files as Tacker's guides write them: v1 (arrays, the registered VIM named) and v2 (maps).
  const protocol = { layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1 }] } };
  const v1Change = join(vnfm.dataDir, 'change-ext-conn-v1.json');
  writeFileSync(
    v1Change,
    JSON.stringify({
      extVirtualLinks: [{ id: 'ext-cli-v1', resourceId: 'public', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: [{ cpProtocolData: [protocol] }] }] }],
      vimConnectionInfo: [{ id: 'vim1', vimId: 'local-openstack', vimType: 'openstack' }],
    }),
  );
  assert.match(await openstack('vnflcm', 'change-ext-conn', id, v1Change), /Change External VNF Connectivity for VNF Instance \S+ has been accepted/);
  await settle(vnfm);
  const v2Change = join(vnfm.dataDir, 'change-ext-conn-v2.json');
  writeFileSync(
    v2Change,
    JSON.stringify({
      extVirtualLinks: [{ id: 'ext-cli-v2', resourceId: 'public', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { VDU1_CP1_1: { cpProtocolData: [protocol] } } }] }],
    }),
  );
  assert.match(await openstack('--os-tacker-api-version', '2', 'vnflcm', 'change-ext-conn', id, v2Change), /has been accepted/);
  await settle(vnfm);
  const changes = (JSON.parse(await openstack('vnflcm', 'op', 'list', '-f', 'json')) as Array<Record<string, string>>).filter(
    (op) => op['VNF Instance ID'] === id && op.Operation === 'CHANGE_EXT_CONN',
  );
  assert.deepEqual(
    changes.map((op) => op['Operation State']),
    ['COMPLETED', 'COMPLETED'],
  );
  const info = (JSON.parse(await openstack('vnflcm', 'show', id, '-f', 'json')) as Record<string, { extVirtualLinkInfo?: Array<{ id: string }> }>)[
    'Instantiated Vnf Info'
  ];
  assert.deepEqual(
    info?.extVirtualLinkInfo?.map((link) => link.id),
    ['ext-cli-v2'],
  );
  assert.match(await openstack('vnflcm', 'terminate', id), /accepted/);
  await settle(vnfm);
  assert.equal((JSON.parse(await openstack('vnflcm', 'show', id, '-f', 'json')) as Record<string, unknown>)['Instantiation State'], 'NOT_INSTANTIATED');
  assert.match(await openstack('vnflcm', 'delete', id), /deleted successfully/);
});

it('supports the Tacker CLI v2 change-vnfpkg to the package the instance already has (re-applied, as Tacker does)', { skip }, async () => {
  const v2 = (...args: string[]) => openstack('--os-tacker-api-version', '2', ...args);
  const csarPath = join(vnfm.dataDir, 'vnf-v2.zip');
  writeFileSync(csarPath, await buildCsar('openstack-vnf-v2'));
  const pkg = (JSON.parse(await openstack('vnf', 'package', 'create', '-f', 'json')) as Record<string, string>).ID as string;
  await openstack('vnf', 'package', 'upload', '--path', csarPath, pkg);
  await settle(vnfm);
  const vnfdId = SAMPLE_PACKAGES['openstack-vnf-v2'].vnfdId;
  const id = (JSON.parse(await v2('vnflcm', 'create', vnfdId, '-f', 'json')) as Record<string, string>).ID as string;
  const instantiate = join(vnfm.dataDir, 'instantiate-v2.json');
  writeFileSync(
    instantiate,
    JSON.stringify({
      flavourId: 'simple',
      extVirtualLinks: [
        {
          id: 'ext',
          resourceId: 'public',
          extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { VDU1_CP1_1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
        },
      ],
    }),
  );
  assert.match(await v2('vnflcm', 'instantiate', id, instantiate), /accepted/);
  await settle(vnfm);
  const change = join(vnfm.dataDir, 'change-vnfpkg.json');
  writeFileSync(change, JSON.stringify({ vnfdId, additionalParams: { upgrade_type: 'RollingUpdate', vdu_params: [{ vdu_id: 'VDU1' }] } }));
  assert.match(await v2('vnflcm', 'change-vnfpkg', id, change), /accepted/);
  await settle(vnfm);
  const ops = JSON.parse(await v2('vnflcm', 'op', 'list', '-f', 'json')) as Array<Record<string, string>>;
  const changed = ops.filter((op) => op['VNF Instance ID'] === id && op.Operation === 'CHANGE_VNFPKG');
  assert.deepEqual(
    changed.map((op) => op['Operation State']),
    ['COMPLETED'],
  );
  assert.equal((JSON.parse(await v2('vnflcm', 'show', id, '-f', 'json')) as Record<string, unknown>)['VNFD ID'], vnfdId);
  assert.match(await v2('vnflcm', 'terminate', id), /accepted/);
  await settle(vnfm);
  assert.match(await v2('vnflcm', 'delete', id), /deleted successfully/);
});

it('supports the Tacker CLI VIM sequence (seed 003 vim-admin.yaml): register, list, show, set, delete', { skip }, async () => {
  const sims = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8')) as {
    'local-openstack': { authUrl: string; username: string; password: string; project: string; projectDomain: string; userDomain: string };
  };
  const os = sims['local-openstack'];
  const config = join(vnfm.dataDir, 'vim-admin.yaml');
  writeFileSync(
    config,
    [
      `auth_url: '${os.authUrl}'`,
      `username: '${os.username}'`,
      `password: '${os.password}'`,
      `project_name: '${os.project}'`,
      `project_domain_name: '${os.projectDomain}'`,
      `user_domain_name: '${os.userDomain}'`,
      '',
    ].join('\n'),
  );
  const registered = JSON.parse(await openstack('vim', 'register', '--config-file', config, '--description', 'seed 003', 'cli-vim', '-f', 'json')) as Record<
    string,
    unknown
  >;
  const id = registered.id as string;
  assert.match(id, /^[0-9a-f-]{36}$/);
  assert.equal(registered.status, 'REACHABLE');
  assert.equal(registered.type, 'openstack');
  assert.equal(registered.is_default, false);

  const listed = JSON.parse(await openstack('vim', 'list', '-f', 'json')) as Array<Record<string, unknown>>;
  assert.ok(listed.some((row) => row.ID === id && row.Name === 'cli-vim' && row.Status === 'REACHABLE'));
  assert.ok(listed.some((row) => row.Name === 'local-openstack' && row['Is Default'] === true));

  const shown = await openstack('vim', 'show', 'cli-vim', '-f', 'json');
  assert.equal((JSON.parse(shown) as Record<string, unknown>).id, id);
  assert.ok(shown.includes('***'));

  const set = JSON.parse(await openstack('vim', 'set', '--is-default', 'true', '--description', 'now the default', id, '-f', 'json')) as Record<
    string,
    unknown
  >;
  assert.equal(set.is_default, true);
  assert.equal(set.description, 'now the default');
  const after = JSON.parse(await openstack('vim', 'list', '-f', 'json')) as Array<Record<string, unknown>>;
  assert.deepEqual(
    after.filter((row) => row.Type === 'openstack' && row['Is Default'] === true).map((row) => row.Name),
    ['cli-vim'],
  );

  const wrong = join(vnfm.dataDir, 'vim-wrong.yaml');
  writeFileSync(wrong, readFileSync(config, 'utf8').replace(`password: '${os.password}'`, "password: 'not-the-password'"));
  await assert.rejects(openstack('vim', 'register', '--config-file', wrong, 'cli-vim-wrong'), /not registered/);
  await assert.rejects(openstack('vim', 'register', '--config-file', config, 'cli-vim'), /already registered/);

  // local-openstack becomes the default again, then the registered VIM goes.
  await openstack('vim', 'set', '--is-default', 'true', 'local-openstack');
  assert.match(await openstack('vim', 'delete', 'cli-vim'), /deleted successfully/);
  const final = JSON.parse(await openstack('vim', 'list', '-f', 'json')) as Array<Record<string, unknown>>;
  assert.ok(!final.some((row) => row.ID === id || row.Name === 'cli-vim-wrong'));
  assert.ok(!vnfm.output().includes(os.password));
});
