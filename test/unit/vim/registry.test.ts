// The VIM type registry: every name a record or request may use reaches one canonical SOL003
// vimType and its driver, unknown types are refused, and a lookup loads only the driver asked for
// (checked in a fresh process, which records every module it loads). Also what each driver says
// about its kind of VIM: the credentials it needs and how its faults read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ProblemError } from '#lib/sol/errors.ts';
import type { VnfcHealth } from '#lib/vim/driver.ts';
import {
  KUBERNETES_VIM,
  OPENSTACK_VIM,
  canonicalVimType,
  driverFor,
  loadDriver,
  registerDriver,
  sameVimType,
  supportedVimType,
  tackerTypeOf,
} from '#lib/vim/registry.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

const ALIASES: Record<string, string[]> = {
  [OPENSTACK_VIM]: [
    'ETSINFV.OPENSTACK_KEYSTONE.V_3',
    'etsinfv.openstack_keystone.v_3',
    'ETSINFV.OPENSTACK_KEYSTONE.V_2',
    'ETSINFV.OPENSTACK_KEYSTONE.v_2',
    'openstack',
    'OpenStack',
  ],
  [KUBERNETES_VIM]: ['ETSINFV.KUBERNETES.V_1', 'etsinfv.kubernetes.v_1', 'kubernetes', 'Kubernetes'],
};

/** The product modules under lib/vim/ a fresh process loads while running `body` (an ES module body). */
function modulesLoadedBy(body: string): string[] {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = [];
    registerHooks({ load(url, context, next) { seen.push(url); return next(url, context); } });
    const registry = await import('#lib/vim/registry.ts');
    ${body}
    console.log(JSON.stringify(seen.filter((url) => url.includes('/lib/vim/')).map((url) => url.replace(/^.*\\/lib\\/vim\\//, ''))));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '[]') as string[];
}

const health = (overrides: Partial<VnfcHealth>): VnfcHealth => ({
  vnfInstanceId: 'i',
  vduId: 'VDU1',
  resourceId: 'r',
  healthy: false,
  reason: 'r',
  ...overrides,
});

describe('VIM types', () => {
  it('normalises every alias to its canonical SOL003 vimType', () => {
    for (const [canonical, aliases] of Object.entries(ALIASES)) {
      for (const alias of aliases) assert.equal(canonicalVimType(alias), canonical, alias);
    }
  });

  it('matches names of the same kind, whichever spelling, and never names of different kinds', () => {
    assert.equal(sameVimType('kubernetes', 'ETSINFV.KUBERNETES.V_1'), true);
    assert.equal(sameVimType('ETSINFV.KUBERNETES.V_1', 'kubernetes'), true);
    assert.equal(sameVimType('openstack', 'ETSINFV.OPENSTACK_KEYSTONE.V_2'), true);
    assert.equal(sameVimType('openstack', 'kubernetes'), false);
    assert.equal(sameVimType('ETSINFV.OPENSTACK_KEYSTONE.V_3', KUBERNETES_VIM), false);
  });

  it('refuses an unknown type everywhere', async () => {
    for (const unknown of ['ETSINFV.AZURE.V_1', 'ETSINFV.KUBERNETES.V_2', 'vmware', '']) {
      assert.equal(canonicalVimType(unknown), undefined, unknown);
      assert.equal(sameVimType(unknown, unknown), false, unknown);
      assert.equal(driverFor(unknown), undefined, unknown);
      assert.equal(await loadDriver(unknown), undefined, unknown);
    }
    assert.throws(
      () => supportedVimType('vmware'),
      (error: unknown) =>
        error instanceof ProblemError &&
        error.status === 422 &&
        /"vmware" is not supported; use ETSINFV\.OPENSTACK_KEYSTONE\.V_3 \(openstack\) or ETSINFV\.KUBERNETES\.V_1 \(kubernetes\)/.test(error.message),
    );
    assert.throws(() => registerDriver('vmware', {} as never), ProblemError);
  });

  it("gives Tacker's short name of each type", () => {
    assert.equal(tackerTypeOf('ETSINFV.KUBERNETES.V_1'), 'kubernetes');
    assert.equal(tackerTypeOf('ETSINFV.OPENSTACK_KEYSTONE.V_2'), 'openstack');
  });
});

describe('driver lookup', () => {
  it('loads a driver once, under every alias of its type', async () => {
    const driver = await loadDriver('kubernetes');
    assert.ok(driver);
    assert.equal(await loadDriver(KUBERNETES_VIM), driver);
    assert.equal(driverFor('etsinfv.kubernetes.v_1'), driver);
    assert.notEqual(await loadDriver('openstack'), driver);
  });

  it('loads only the driver asked for', () => {
    const kubernetes = modulesLoadedBy(`await registry.loadDriver('kubernetes');`);
    assert.ok(kubernetes.includes('kubernetes/driver.ts'), kubernetes.join());
    assert.deepEqual(
      kubernetes.filter((path) => path.startsWith('openstack/')),
      [],
    );
    const openstack = modulesLoadedBy(`await registry.loadDriver('ETSINFV.OPENSTACK_KEYSTONE.V_3');`);
    assert.ok(openstack.includes('openstack/driver.ts'), openstack.join());
    assert.deepEqual(
      openstack.filter((path) => path.startsWith('kubernetes/')),
      [],
    );
    assert.deepEqual(
      modulesLoadedBy(`registry.canonicalVimType('kubernetes');`).filter((path) => path.includes('/')),
      [],
    );
  });
});

describe('what each driver says about its kind of VIM', () => {
  it('names the credentials a registration needs', async () => {
    const openstack = (await loadDriver(OPENSTACK_VIM))?.credentials;
    const kubernetes = (await loadDriver(KUBERNETES_VIM))?.credentials;
    assert.ok(openstack && kubernetes);
    assert.equal(openstack.accessInfo.safeParse({ username: 'u', password: 'p', projectId: 'x' }).success, true);
    assert.equal(openstack.accessInfo.safeParse({ username: 'u', password: 'p' }).success, false);
    assert.equal(kubernetes.accessInfo.safeParse({ bearer_token: 't' }).success, true);
    assert.equal(kubernetes.accessInfo.safeParse({ username: 'u', password: 'p', project: 'x' }).success, false);
    assert.deepEqual(kubernetes.fromTacker({ bearer_token: 't', ssl_ca_cert: 'ca' }, {}, undefined), {
      accessInfo: { bearer_token: 't' },
      interfaceExtra: { ssl_ca_cert: 'ca' },
    });
    assert.throws(() => kubernetes.fromTacker({ username: 'u' }, {}, undefined), /bearer_token/);
    assert.deepEqual(openstack.fromTacker({ username: 'u', password: 'p', cert_verify: 'False', region_name: '' }, { name: 'demo' }, { region: 'R1' }), {
      accessInfo: { username: 'u', password: 'p', project: 'demo', region: 'R1' },
      interfaceExtra: { cert_verify: false },
    });
  });

  it('words the alarm of a faulty VNFC for its VIM', async () => {
    const openstack = await loadDriver(OPENSTACK_VIM);
    const kubernetes = await loadDriver(KUBERNETES_VIM);
    assert.ok(openstack && kubernetes);
    assert.deepEqual(openstack.faultWording(health({ fault: 'FAILED', vimStatus: 'SHUTOFF' })), {
      severity: 'MAJOR',
      eventType: 'EQUIPMENT_ALARM',
      probableCause: 'Server SHUTOFF',
      faultType: 'VNFC_FAILURE',
    });
    assert.equal(openstack.faultWording(health({ fault: 'MISSING' })).probableCause, 'Server missing');
    assert.deepEqual(kubernetes.faultWording(health({ fault: 'FAILED', vimStatus: 'CrashLoopBackOff' })), {
      severity: 'CRITICAL',
      eventType: 'PROCESSING_ERROR_ALARM',
      probableCause: 'Pod CrashLoopBackOff',
      faultType: 'VNFC_FAILURE',
    });
    assert.equal(kubernetes.faultWording(health({ fault: 'MISSING' })).faultType, 'VNFC_RESOURCE_MISSING');
  });
});
