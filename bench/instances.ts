// `BENCH_ONLY=instances npm run bench`: the VNF instance collection at scale in one local runtime.
// Creates BENCH_INSTANCES (default 100,000) instances through POST /vnflcm/v2/vnf_instances (the
// first BENCH_SEQUENTIAL with one client, the rest with BENCH_CONCURRENCY clients), writes as many op
// occs straight into the op occ table (an LCM operation each would take hours), then times list
// pages, filtered pages read through an index and the runtime's memory, each beside its target and
// Tacker's figure. Each time is the HTTP exchange alone, from the request's start to the answer's
// last byte; the test client checks a sample of the answers against the ETSI schemas, after it.
// The DynamoDB read units of one page are those the store's own queries consume
// (ReturnConsumedCapacity on the same calls, made from this process against the runtime's tables).
// The last line printed is one JSON object with the headline figures.
import { benchInstance, benchOpOcc } from './list-filters.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { listOpOccs } from '#lib/lcm/op-occs.ts';
import { listVnfInstances } from '#lib/lcm/vnf-instances.ts';
import { documentClient } from '#lib/store/dynamo.ts';
import { DynamoVnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import { DynamoVnfInstanceStore } from '#lib/store/vnf-instances.ts';
import type { VnfInstanceRecord } from '#lib/sol/model.ts';
import { createLocalClient } from '../local/oauth2.ts';
import { adminCredentials, client, seedPackage, startVnfm, type LocalVnfm } from '../test/support/runtime.ts';
import { machineSpeed } from './machine.ts';
import { cpuMs, heapOf, residentMiB } from './openstack-lifecycles.ts';
import { median as p50, summary } from './stats.ts';

const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 100_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 2_000);
const LIST_SAMPLES = Number(process.env.BENCH_LIST_SAMPLES ?? 200);
/** Untimed first pages before the first page is timed again, warm. */
const WARM_PAGES = Number(process.env.BENCH_WARM_PAGES ?? 5_000);
const MATCHES = 10;
const PAGE_SIZE = 100;

const TARGETS = { postP50Ms: 10, postPerSecond8: 300, listPageP50Ms: 3.5, filteredPageP50Ms: 5, filteredNoMatchP50Ms: 5, rssMiB: 400 };
const TACKER = { post: '97 ms', list: '3.5 ms' };

const verdict = (ok: boolean) => (ok ? 'meets' : 'MISSES');

/**
 * Which answers of a loop the test client checks against the ETSI schemas and SOL013 (the first
 * ten, then one in 500). A time is the exchange's alone either way (the client's `exchangeMs`):
 * the checks are this process's work after the answer, and, on a small machine, CPU the runtime
 * would otherwise have had.
 */
const checked = (n: number) => n < 10 || n % 500 === 0;

/** Writes the op occs through the store's own create (so they carry every key the store derives), a few at a time. */
async function seedOpOccs(instanceIds: string[], watched: string): Promise<void> {
  const store = new DynamoVnfLcmOpOccStore('VnfLcmOpOccsTable');
  const every = Math.floor(INSTANCES / MATCHES);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < INSTANCES) {
        const n = next++;
        const pinned = n % every === 0;
        await store.create(
          benchOpOcc(n, pinned ? watched : (instanceIds[n % (instanceIds.length - 1)] as string), pinned ? 'FAILED_TEMP' : 'COMPLETED') as never,
        );
      }
    }),
  );
}

/**
 * An INSTANTIATED instance as an OpenStack instantiate leaves it (~8 KB as DynamoDB JSON): four VNFCs
 * with two connection points each, external and internal virtual links, the VIM connection, the
 * stack and what the health sweep watches.
 */
function instantiatedInstance(n: number, tenantId: string, vnfdId: string): VnfInstanceRecord {
  const createdAt = new Date(Date.UTC(2026, 11, 1) + n * 1000).toISOString();
  const id = `fleet-vnf-${String(n).padStart(6, '0')}`;
  const vnfcs = [0, 1, 2, 3].map((j) => ({
    id: `${id}-vnfc-${j}`,
    vduId: 'VDU1',
    computeResource: { vimConnectionId: 'vim-1', resourceId: `${id}-server-${j}`, vimLevelResourceType: 'OS::Nova::Server' },
    storageResourceIds: [],
    vnfcCpInfo: [0, 1].map((k) => ({
      id: `${id}-cp-${j}-${k}`,
      cpdId: `CP${k}`,
      vnfExtCpId: `ext-${k}`,
      cpProtocolInfo: [
        {
          layerProtocol: 'IP_OVER_ETHERNET',
          ipOverEthernet: {
            macAddress: 'fa:16:3e:00:00:01',
            ipAddresses: [{ type: 'IPV4', addresses: [`10.0.${j}.${k + 5}`], isDynamic: true, subnetId: 'subnet-1' }],
          },
        },
      ],
    })),
    metadata: { creation_time: createdAt, stack_id: `stack/${id}` },
  }));
  return {
    ...benchInstance(n, vnfdId),
    id,
    tenantId,
    createdSeq: `${createdAt}#${id}`,
    vnfPkgId: 'fleet-package',
    vnfInstanceName: `fleet-${n}`,
    instantiationState: 'INSTANTIATED',
    instantiatedVnfInfo: {
      flavourId: 'simple',
      vnfState: 'STARTED',
      scaleStatus: [{ aspectId: 'VDU1_scale', scaleLevel: 1 }],
      extCpInfo: [0, 1].map((k) => ({
        id: `ext-${k}`,
        cpdId: `CP${k}`,
        cpConfigId: 'c',
        cpProtocolInfo: [{ layerProtocol: 'IP_OVER_ETHERNET' }],
        associatedVnfcCpId: `${id}-cp-0-${k}`,
      })),
      extVirtualLinkInfo: [
        {
          id: 'ext-vl-1',
          resourceHandle: { vimConnectionId: 'vim-1', resourceId: 'net-1' },
          currentVnfExtCpData: [{ cpdId: 'CP0', cpConfig: { c: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
        },
      ],
      vnfcResourceInfo: vnfcs,
      vnfVirtualLinkResourceInfo: [
        {
          id: 'vl-1',
          vnfVirtualLinkDescId: 'internalVL1',
          networkResource: { vimConnectionId: 'vim-1', resourceId: 'net-int-1', vimLevelResourceType: 'OS::Neutron::Net' },
          vnfLinkPorts: vnfcs.map((vnfc) => ({
            id: `port-${vnfc.id}`,
            resourceHandle: { vimConnectionId: 'vim-1', resourceId: `port-${vnfc.id}` },
            cpInstanceId: `cp-${vnfc.id}`,
            cpInstanceType: 'VNFC_CP',
          })),
        },
      ],
      vnfcInfo: vnfcs.map((vnfc) => ({ id: `info-${vnfc.id}`, vduId: 'VDU1', vnfcResourceInfoId: vnfc.id, vnfcState: 'STARTED' })),
    },
    vimConnectionInfo: {
      'vim-1': {
        vimId: 'vim-1',
        vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
        interfaceInfo: { endpoint: 'http://keystone/identity' },
        accessInfo: { region: 'RegionOne', project: 'nfv' },
      },
    },
    vimResources: { stackId: `stack/${id}`, stackName: `vnf-${id}` },
    metadata: { site: 'bench', tier: 'gold' },
    revision: 7,
  } as unknown as VnfInstanceRecord;
}

/** Points this process's store clients at the runtime's DynamoDB, and counts the read units their calls consume. */
function meterStores(vnfm: LocalVnfm): { units(): number; reset(): void } {
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: vnfm.endpoints.dynamodb,
    AWS_REGION: vnfm.endpoints.region,
    AWS_ACCESS_KEY_ID: vnfm.awsCredentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: vnfm.awsCredentials.secretAccessKey,
  });
  delete process.env.AWS_SESSION_TOKEN;
  let units = 0;
  documentClient().middlewareStack.add(
    (next) => async (args) => {
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      units += (out.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 0;
      return out;
    },
    { step: 'initialize', name: 'benchReadUnits' },
  );
  return { units: () => units, reset: () => (units = 0) };
}

/** A window in which the runtime counts as idle when it used at most IDLE_CPU_MS of CPU (all its threads; /proc counts in 10 ms ticks). */
const IDLE_WINDOW_MS = 500;
const IDLE_CPU_MS = 20;
/** Consecutive idle windows that make the runtime settled, and how long to wait for them at most. */
const IDLE_WINDOWS = 4;
const SETTLE_LIMIT_MS = 300_000;

/**
 * Waits until the runtime is idle (IDLE_WINDOWS windows in a row of at most 5% of a core, the
 * periodic sweeps of an idle runtime included), at most SETTLE_LIMIT_MS; the seconds it took.
 */
async function settled(pid: number): Promise<number> {
  const started = performance.now();
  let quiet = 0;
  let last = cpuMs(pid);
  while (quiet < IDLE_WINDOWS && performance.now() - started < SETTLE_LIMIT_MS) {
    await new Promise((resolveWindow) => setTimeout(resolveWindow, IDLE_WINDOW_MS));
    const now = cpuMs(pid);
    quiet = now - last <= IDLE_CPU_MS ? quiet + 1 : 0;
    last = now;
  }
  return (performance.now() - started) / 1000;
}

export async function benchInstances(): Promise<void> {
  const machineBefore = await machineSpeed();
  const vnfm = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: `PageSize=${PAGE_SIZE} LogLevel=warn` } });
  try {
    // An NFVO's client of the tenant (an admin's lists span every tenant, which the tenant-scoped indexes do not serve).
    const nfvo = {
      ...createLocalClient(vnfm.dataDir, { tenantId: 'default', scopes: ['vnflcm:read', 'vnflcm:write'] }),
      tokenUrl: adminCredentials(vnfm).tokenUrl,
    };
    // node:http on keep-alive sockets: undici's fetch costs the 2-core box's runtime a millisecond of CPU an exchange (test/support/runtime.ts ClientTransport).
    const call = client(vnfm, nfvo, 'http');
    const pkg = await seedPackage(vnfm);
    const ids: string[] = [];
    // Every INSTANCES/MATCHES-th instance is named "bench-match": the indexed filter's 10 matches.
    const every = Math.floor(INSTANCES / MATCHES);
    const create = async (n: number, into?: number[]) => {
      const body = { vnfdId: pkg.vnfdId, vnfInstanceName: n % every === 0 ? 'bench-match' : `bench-${n}`, metadata: { site: 'bench' } };
      const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body, check: checked(n) });
      into?.push(reply.exchangeMs);
      if (reply.status !== 201) throw new Error(`POST answered ${reply.status}: ${reply.text}`);
      ids.push((reply.body as { id: string }).id);
    };
    let n = 0;
    for (; n < 50; n += 1) await create(n); // warm-up

    // One client: the latency an NFVO sees. Then several clients: latency and throughput under load.
    const sequential: number[] = [];
    for (const end = Math.min(INSTANCES, n + SEQUENTIAL); n < end; n += 1) await create(n, sequential);
    const concurrent: number[] = [];
    const loadStarted = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (n < INSTANCES) await create(n++, concurrent);
      }),
    );
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const perSecond = concurrent.length / loadSeconds;

    const meter = meterStores(vnfm);
    const watchedInstance = ids[ids.length - 1] as string;
    const seedStarted = performance.now();
    await seedOpOccs(ids, watchedInstance);
    const seedSeconds = (performance.now() - seedStarted) / 1000;

    /** LIST_SAMPLES exchanges of GET `path` by `as` (the NFVO's client), each answering 200 with `expected` items. */
    const timed = async (path: string, expected: number | undefined, as: typeof call = call): Promise<number[]> => {
      const times: number[] = [];
      for (let i = 0; i < LIST_SAMPLES; i += 1) {
        const reply = await as('GET', path, { check: checked(i) });
        times.push(reply.exchangeMs);
        if (reply.status !== 200) throw new Error(`${path} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
        const length = (reply.body as unknown[]).length;
        if (expected !== undefined && length !== expected) throw new Error(`${path} answered ${length} items, not ${expected}`);
      }
      return times;
    };
    const filtered = (collection: string, filter: string) => `/vnflcm/v2/${collection}?filter=${encodeURIComponent(filter)}`;

    // Reads are timed on a settled runtime, warmed up as the creates were: the 200,000 writes
    // above leave LevelDB (the local DynamoDB's store) compacting its levels on a thread of its own
    // for a while, CPU that the reads would otherwise share on a small machine.
    const settleSeconds = await settled(vnfm.pid);
    for (let i = 0; i < 50; i += 1) await call('GET', '/vnflcm/v2/vnf_instances', { check: false });
    const firstPage = await timed('/vnflcm/v2/vnf_instances', PAGE_SIZE);
    // A page deep in the collection, reached through its marker.
    let link = '/vnflcm/v2/vnf_instances';
    for (let i = 0; i < 50; i += 1) {
      const reply = await call('GET', link);
      link = /<([^>]+)>; rel="next"/.exec(reply.headers.get('link') ?? '')?.[1] ?? link;
    }
    const deepPage = await timed(link, PAGE_SIZE);
    const byName = await timed(filtered('vnf_instances', '(eq,vnfInstanceName,bench-match)'), MATCHES);
    const byNameNone = await timed(filtered('vnf_instances', '(eq,vnfInstanceName,no-such-name)'), 0);
    const byState = await timed(filtered('vnf_instances', '(eq,instantiationState,INSTANTIATED)'), 0);
    const opsOfInstance = await timed(filtered('vnf_lcm_op_occs', `(eq,vnfInstanceId,${watchedInstance})`), MATCHES);
    const opsFailed = await timed(filtered('vnf_lcm_op_occs', '(eq,operationState,FAILED_TEMP)'), MATCHES);
    const opPage = await timed('/vnflcm/v2/vnf_lcm_op_occs', PAGE_SIZE);
    // The first page again once the runtime has served lists for a while. Its threads compile their
    // list path as it runs: a runtime started on a 100,000-instance folder spent ~2.5 ms of its own
    // thread's CPU and ~1.4 ms of the stand-ins' on a page at first, ~1.7 and ~0.9 ms after ~20 s of
    // pages. The first figure is of pages 51-250 after the creates; this one is after WARM_PAGES more.
    for (let i = 0; i < WARM_PAGES; i += 1) await call('GET', '/vnflcm/v2/vnf_instances', { check: false });
    const warmPage = await timed('/vnflcm/v2/vnf_instances', PAGE_SIZE);

    // Another tenant's fleet of INSTANTIATED instances, as instantiates leave them: a list page
    // leaves their instantiatedVnfInfo out by default (and reads only what it shows), all_fields not.
    const fleetStore = new DynamoVnfInstanceStore('VnfInstancesTable');
    for (let i = 0; i < PAGE_SIZE + 1; i += 1) await fleetStore.create(instantiatedInstance(i, 'fleet', pkg.vnfdId));
    const operator = client(
      vnfm,
      {
        ...createLocalClient(vnfm.dataDir, { tenantId: 'fleet', scopes: ['vnflcm:read'] }),
        tokenUrl: adminCredentials(vnfm).tokenUrl,
      },
      'http',
    );
    const fleetPage = await timed('/vnflcm/v2/vnf_instances', PAGE_SIZE, operator);
    const fleetAllFields = await timed('/vnflcm/v2/vnf_instances?all_fields', PAGE_SIZE, operator);

    // Read units of one page, as the store's queries consume them (the same lister, run here).
    const deps = { instances: new DynamoVnfInstanceStore('VnfInstancesTable'), opOccs: new DynamoVnfLcmOpOccStore('VnfLcmOpOccsTable') } as unknown as CoreDeps;
    const tenant = { tenantId: 'default' };
    const unitsOf = async (list: () => Promise<unknown>) => {
      meter.reset();
      await list();
      return meter.units();
    };
    const q = (filter?: string) => (filter ? new URLSearchParams({ filter }).toString() : '');
    const units = {
      listPage: await unitsOf(() => listVnfInstances(deps, tenant, 2, vnfm.url, q(), PAGE_SIZE)),
      filteredPage: await unitsOf(() => listVnfInstances(deps, tenant, 2, vnfm.url, q('(eq,vnfInstanceName,bench-match)'), PAGE_SIZE)),
      noMatchPage: await unitsOf(() => listVnfInstances(deps, tenant, 2, vnfm.url, q('(eq,vnfInstanceName,no-such-name)'), PAGE_SIZE)),
      opOccsOfInstance: await unitsOf(() => listOpOccs(deps, tenant, 2, vnfm.url, q(`(eq,vnfInstanceId,${watchedInstance})`), PAGE_SIZE)),
      opOccsFailed: await unitsOf(() => listOpOccs(deps, tenant, 2, vnfm.url, q('(eq,operationState,FAILED_TEMP)'), PAGE_SIZE)),
      unindexed: await unitsOf(() => listVnfInstances(deps, tenant, 2, vnfm.url, q('(cont,vnfInstanceName,no-such)'), PAGE_SIZE)),
      fleetPage: await unitsOf(() => listVnfInstances(deps, { tenantId: 'fleet' }, 2, vnfm.url, q(), PAGE_SIZE)),
    };
    documentClient().destroy();
    // Read last, after every list above (the whole-collection read included): the peak is the process's since its start.
    const memory = residentMiB(vnfm.pid);
    const heap = await heapOf(vnfm);
    const machineAfter = await machineSpeed();

    const result = {
      instances: INSTANCES,
      postP50Ms: Number(p50(sequential).toFixed(2)),
      postPerSecond8: Math.round(perSecond),
      listPageP50Ms: Number(p50(firstPage).toFixed(2)),
      listPageWarmP50Ms: Number(p50(warmPage).toFixed(2)),
      filteredPageP50Ms: Number(p50(byName).toFixed(2)),
      filteredNoMatchP50Ms: Number(p50(byNameNone).toFixed(2)),
      rssMiB: Math.round(memory.now),
      instantiatedPageP50Ms: Number(p50(fleetPage).toFixed(2)),
      settleSeconds: Math.round(settleSeconds),
      machine: { before: machineBefore, after: machineAfter },
    };
    const line = (label: string, figures: string, target: string) => console.log(`${label.padEnd(58)} ${figures.padEnd(40)} ${target}`);
    console.log(
      `VNF instances at scale: ${INSTANCES} instances created through the API by a tenant's client, ${INSTANCES} op occs (local runtime, page size ${PAGE_SIZE}; the client on node:http keep-alive sockets)`,
    );
    line(
      'POST /vnf_instances, 1 client',
      summary(sequential),
      `target p50 <= ${TARGETS.postP50Ms} ms (${verdict(result.postP50Ms <= TARGETS.postP50Ms)}); Tacker ${TACKER.post}`,
    );
    line(
      `POST /vnf_instances, ${CONCURRENCY} clients`,
      `${summary(concurrent)}  ${result.postPerSecond8}/s`,
      `target >= ${TARGETS.postPerSecond8}/s (${verdict(result.postPerSecond8 >= TARGETS.postPerSecond8)})`,
    );
    line(
      'GET /vnf_instances first page',
      summary(firstPage),
      `target p50 <= ${TARGETS.listPageP50Ms} ms (${verdict(result.listPageP50Ms <= TARGETS.listPageP50Ms)}); Tacker ${TACKER.list}; ${units.listPage} RCU`,
    );
    line(
      `GET /vnf_instances first page, after ${WARM_PAGES} more`,
      summary(warmPage),
      `the same target once warm: ${verdict(result.listPageWarmP50Ms <= TARGETS.listPageP50Ms)}`,
    );
    line('GET /vnf_instances page 51 via marker', summary(deepPage), `Tacker ${TACKER.list}`);
    line(
      `GET /vnf_instances (eq,vnfInstanceName,X) ${MATCHES} match`,
      summary(byName),
      `target p50 <= ${TARGETS.filteredPageP50Ms} ms (${verdict(result.filteredPageP50Ms <= TARGETS.filteredPageP50Ms)}); ${units.filteredPage} RCU`,
    );
    line(
      'GET /vnf_instances (eq,vnfInstanceName,X) no match',
      summary(byNameNone),
      `target p50 <= ${TARGETS.filteredNoMatchP50Ms} ms (${verdict(result.filteredNoMatchP50Ms <= TARGETS.filteredNoMatchP50Ms)}); ${units.noMatchPage} RCU`,
    );
    line('GET /vnf_instances (eq,instantiationState,INSTANTIATED) none', summary(byState), '');
    line(`GET /vnf_lcm_op_occs (eq,vnfInstanceId,X) ${MATCHES} match`, summary(opsOfInstance), `${units.opOccsOfInstance} RCU`);
    line(`GET /vnf_lcm_op_occs (eq,operationState,FAILED_TEMP) ${MATCHES}`, summary(opsFailed), `${units.opOccsFailed} RCU`);
    line('GET /vnf_lcm_op_occs first page', summary(opPage), '');
    line(
      `GET /vnf_instances first page, ${PAGE_SIZE} INSTANTIATED (~8 KB each)`,
      summary(fleetPage),
      `reads only what the page shows, from the summary index; ${units.fleetPage} RCU`,
    );
    line(`GET /vnf_instances?all_fields, ${PAGE_SIZE} INSTANTIATED`, summary(fleetAllFields), 'whole records');
    line('GET /vnf_instances (cont,vnfInstanceName,X): no index', '(not timed)', `${units.unindexed} RCU: the whole collection`);
    line(
      `runtime RSS at ${INSTANCES} instances and op occs`,
      `${result.rssMiB} MiB (peak ${memory.peak.toFixed(0)}; anon ${memory.anon.toFixed(0)}, files ${memory.file.toFixed(0)})`,
      `target <= ${TARGETS.rssMiB} MiB (${verdict(result.rssMiB <= TARGETS.rssMiB)}); JS heap ${(heap.heapUsed / 2 ** 20).toFixed(0)} MiB (the stand-ins thread's ${(heap.standinsHeapUsed / 2 ** 20).toFixed(0)} MiB more), external ${(heap.external / 2 ** 20).toFixed(0)} MiB; Tacker two processes of ~205 MiB`,
    );
    console.log(
      `(op occs written straight to the table in ${seedSeconds.toFixed(0)} s; the runtime settled ${settleSeconds.toFixed(0)} s after them, LevelDB compacting, before the reads were timed, which began after 50 untimed first pages)`,
    );
    console.log(
      `machine speed (bench/machine.ts; no product code): JSON ${machineBefore.jsonMs} ms before, ${machineAfter.jsonMs} ms after; loopback HTTP round trip ${machineBefore.loopbackMs} ms before, ${machineAfter.loopbackMs} ms after`,
    );
    console.log(JSON.stringify(result));
  } finally {
    await vnfm.stop();
  }
}
