// What the LCM benches share: the sample OpenStack VNF onboarded on a runtime, the request that
// instantiates it on the built-in OpenStack simulator, and how a batch of operations ended.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCsar, SAMPLE_PACKAGES } from '../test/support/csar-builder.ts';
import { client, localControl, settle, type LocalVnfm, type Reply } from '../test/support/runtime.ts';

export const INSTANTIATE_ON_SIMULATOR = {
  flavourId: 'simple',
  extVirtualLinks: [
    {
      id: 'ext-public',
      resourceId: 'public',
      extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { VDU1_CP1_1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
    },
  ],
};

/** Onboards `openstack-vnf-v1` and answers its vnfdId. */
export async function onboardSample(vnfm: LocalVnfm): Promise<string> {
  const call = client(vnfm);
  const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
  await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, {
    raw: await buildCsar('openstack-vnf-v1'),
    headers: { 'Content-Type': 'application/zip' },
  });
  await settle(vnfm);
  return SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
}

/** Creates `count` instances of the VNFD, at most 50 requests at a time (the operations are what runs concurrently, not the creates); their ids. */
export async function createInstances(vnfm: LocalVnfm, vnfdId: string, count: number): Promise<string[]> {
  const call = client(vnfm);
  const ids: string[] = [];
  while (ids.length < count) {
    const replies = await Promise.all(
      Array.from({ length: Math.min(50, count - ids.length) }, () => call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } })),
    );
    for (const reply of replies) {
      if (reply.status !== 201) throw new Error(`POST /vnf_instances answered ${reply.status}: ${reply.text}`);
      ids.push((reply.body as { id: string }).id);
    }
  }
  return ids;
}

/** The OpenStack simulator's control URL. */
export function simulatorControl(vnfm: LocalVnfm): string {
  return (JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8')) as Record<string, { control: string }>)['local-openstack']?.control as string;
}

export interface Outcomes {
  completed: number;
  /** Ended in any other final state (FAILED_TEMP, FAILED, ROLLED_BACK) or refused (not 202). */
  failed: number;
  /** Still STARTING, PROCESSING or ROLLING_BACK after the runtime settled. */
  stuck: number;
  /** Accepted (202) but its op occ cannot be found, or is missing from its instance's operations. */
  lost: number;
  /** Error detail (or HTTP refusal) -> count. */
  reasons: Map<string, number>;
}

/** How the operations whose replies are given ended (each accepted one looked up by its Location and in the list of all op occs). */
export async function outcomesOf(vnfm: LocalVnfm, replies: Reply[]): Promise<Outcomes> {
  const call = client(vnfm);
  const outcomes: Outcomes = { completed: 0, failed: 0, stuck: 0, lost: 0, reasons: new Map() };
  const reason = (text: string) => outcomes.reasons.set(text, (outcomes.reasons.get(text) ?? 0) + 1);
  const listed = new Set<string>();
  for (let link: string | undefined = '/vnflcm/v2/vnf_lcm_op_occs'; link; ) {
    const reply = await call('GET', link);
    for (const occ of reply.body as Array<{ id: string }>) listed.add(occ.id);
    link = /<([^>]+)>; rel="next"/.exec(reply.headers.get('link') ?? '')?.[1];
  }
  for (const reply of replies) {
    if (reply.status !== 202) {
      outcomes.failed += 1;
      reason(`HTTP ${reply.status}: ${reply.text.slice(0, 160)}`);
      continue;
    }
    const path = new URL(reply.headers.get('location') ?? '').pathname;
    const occ = await call('GET', path);
    const body = occ.body as { id: string; operationState: string; error?: { detail?: string } } | undefined;
    if (occ.status !== 200 || !body || !listed.has(body.id)) {
      outcomes.lost += 1;
      continue;
    }
    if (body.operationState === 'COMPLETED') outcomes.completed += 1;
    else if (['STARTING', 'PROCESSING', 'ROLLING_BACK'].includes(body.operationState)) outcomes.stuck += 1;
    else {
      outcomes.failed += 1;
      reason(`${body.operationState}: ${(body.error?.detail ?? '').slice(0, 200)}`);
    }
  }
  return outcomes;
}

export function describeOutcomes(o: Outcomes): string {
  return `${o.completed} completed / ${o.failed} failed / ${o.stuck} stuck / ${o.lost} lost`;
}

/** CPU time (user + system, ms) the process `pid` has used so far, all its threads (Linux). */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in USER_HZ (100)
}

/** The runtime process's resident set now (VmRSS), at its peak (VmHWM), and now in anonymous memory and in mapped files (the node binary, LevelDB's table files), in MiB. */
export function residentMiB(pid: number): { now: number; peak: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return { now: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024, anon: kib('RssAnon') / 1024, file: kib('RssFile') / 1024 };
}

/** The runtime's process.memoryUsage() and its stand-ins thread's JS heap, from its local control. */
export async function heapOf(vnfm: LocalVnfm): Promise<NodeJS.MemoryUsage & { standinsHeapTotal: number; standinsHeapUsed: number }> {
  return (await (await localControl(vnfm, 'GET', '/_local/memory')).json()) as NodeJS.MemoryUsage & { standinsHeapTotal: number; standinsHeapUsed: number };
}
