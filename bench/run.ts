// `npm run bench`: latency of POST /vnf_instances and of one list page of 100 with 10,000
// instances in the local runtime, and the runtime's peak memory, beside Tacker's figures.
// BENCH_INSTANCES, BENCH_SEQUENTIAL, BENCH_CONCURRENCY and BENCH_LIST_SAMPLES change the sizes;
// BENCH_ONLY=instances, onboarding, downloads, lcm, operations, notifications, health, pm, credentials, soak, bundles or list-filters runs one part.
// BENCH_OP_OCCS sets how many op occs (and VNF instances) the filtered lists of list-filters read among.
import { client, seedPackage, startVnfm } from '../test/support/runtime.ts';
import { benchOnboarding } from './onboarding.ts';
import { benchDownloads } from './downloads.ts';
import { benchLcm } from './lcm.ts';
import { benchLcmOperations } from './lcm-operations.ts';
import { benchNotifications } from './notifications.ts';
import { benchHealth } from './health.ts';
import { benchPm } from './pm.ts';
import { benchSoak } from './soak.ts';
import { heapOf, residentMiB } from './openstack-lifecycles.ts';
import { benchCredentials } from './credentials.ts';
import { summary } from './stats.ts';
import { benchBundles } from './bundles.ts';
import { benchListFilters } from './list-filters.ts';

const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 10_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 2_000);
const LIST_SAMPLES = Number(process.env.BENCH_LIST_SAMPLES ?? 200);

async function benchInstances(): Promise<void> {
  const vnfm = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: 'PageSize=100 LogLevel=warn' } });
  try {
    const call = client(vnfm);
    const pkg = await seedPackage(vnfm);
    const body = { vnfdId: pkg.vnfdId, vnfInstanceName: 'bench', metadata: { site: 'bench' } };
    for (let i = 0; i < 50; i += 1) await call('POST', '/vnflcm/v2/vnf_instances', { body }); // warm-up

    // One client: the latency an NFVO sees. Then several clients: latency and throughput under load.
    const sequential: number[] = [];
    const post = async (into: number[]) => {
      const started = performance.now();
      const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body });
      into.push(performance.now() - started);
      if (reply.status !== 201) throw new Error(`POST answered ${reply.status}: ${reply.text}`);
    };
    const sequentialCount = Math.min(SEQUENTIAL, INSTANCES - 50);
    for (let i = 0; i < sequentialCount; i += 1) await post(sequential);
    const concurrent: number[] = [];
    let next = 50 + sequentialCount;
    const loadStarted = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < INSTANCES) {
          next += 1;
          await post(concurrent);
        }
      }),
    );
    const loadSeconds = (performance.now() - loadStarted) / 1000;

    const firstPage: number[] = [];
    for (let i = 0; i < LIST_SAMPLES; i += 1) {
      const started = performance.now();
      const reply = await call('GET', '/vnflcm/v2/vnf_instances');
      firstPage.push(performance.now() - started);
      if ((reply.body as unknown[]).length !== 100) throw new Error('list page is not 100 items');
    }
    // A page deep in the collection, reached through its marker.
    let link = '/vnflcm/v2/vnf_instances';
    for (let i = 0; i < 50; i += 1) {
      const reply = await call('GET', link);
      link = /<([^>]+)>; rel="next"/.exec(reply.headers.get('link') ?? '')?.[1] ?? link;
    }
    const deepPage: number[] = [];
    for (let i = 0; i < LIST_SAMPLES; i += 1) {
      const started = performance.now();
      await call('GET', link);
      deepPage.push(performance.now() - started);
    }
    const filtered: number[] = [];
    for (let i = 0; i < 20; i += 1) {
      const started = performance.now();
      await call('GET', '/vnflcm/v2/vnf_instances?filter=(eq,vnfInstanceName,no-such-name)');
      filtered.push(performance.now() - started);
    }
    const memory = residentMiB(vnfm.pid);
    const heap = await heapOf(vnfm);

    console.log(`VNFM local runtime benchmark: ${INSTANCES} VNF instances in one local runtime process`);
    console.log(`POST /vnflcm/v2/vnf_instances, 1 client ${summary(sequential)}   (Tacker: 97 ms; target <= 10 ms)`);
    console.log(`POST /vnflcm/v2/vnf_instances, ${CONCURRENCY} clients ${summary(concurrent)}   ${(concurrent.length / loadSeconds).toFixed(0)} creates/s`);
    console.log(`GET  /vnf_instances first page of 100   ${summary(firstPage)}`);
    console.log(`GET  /vnf_instances page 51 via marker  ${summary(deepPage)}`);
    console.log(`GET  /vnf_instances filter, no match    ${summary(filtered)}   (scans all ${INSTANCES})`);
    console.log(
      `runtime memory at ${INSTANCES} instances   RSS now ${memory.now.toFixed(0)} MiB (goal < 600 MiB at 10,000), peak ${memory.peak.toFixed(0)} MiB (JS heap used ${(heap.heapUsed / 2 ** 20).toFixed(0)} of ${(heap.heapTotal / 2 ** 20).toFixed(0)} MiB, external ${(heap.external / 2 ** 20).toFixed(0)} MiB)   (Tacker: two processes of ~205 MiB each)`,
    );
  } finally {
    await vnfm.stop();
  }
}

if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'instances') await benchInstances();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'onboarding') await benchOnboarding();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'downloads') await benchDownloads();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'lcm') await benchLcm();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'lcm' || process.env.BENCH_ONLY === 'operations') await benchLcmOperations();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'notifications') await benchNotifications();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'health') await benchHealth();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'pm') await benchPm();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'credentials') await benchCredentials();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'soak') await benchSoak();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'bundles') await benchBundles();
if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === 'list-filters') await benchListFilters();
