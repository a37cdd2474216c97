// The filtered lists NFVOs send all the time, read through an index: GET /vnf_lcm_op_occs with
// (eq,vnfInstanceId,X) matching 10 op occs and with an instance that has none, among BENCH_OP_OCCS
// op occs, and GET /vnf_instances with (eq,vnfdId,X) the same way among as many instances (all
// written straight into the local runtime's tables). The same lists with the value written twice,
// (in,attr,X,X), are read through the index too, one query per value, merged. (They read the whole
// collection before the planner took `in`; BENCH_ONLY=instances prints the read units of that.)
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { client, startVnfm } from '../test/support/runtime.ts';
import { summary } from './stats.ts';

const OP_OCCS = Number(process.env.BENCH_OP_OCCS ?? 2_000);
const SAMPLES = Number(process.env.BENCH_OP_OCC_SAMPLES ?? 30);
const MATCHES = 10;

/** An op occ of `vnfInstanceId` as the LCM writes it, for the list benches to seed (bench/instances.ts too). */
export function benchOpOcc(n: number, vnfInstanceId: string, operationState: string): Record<string, unknown> {
  const startTime = new Date(Date.UTC(2026, 11, 1) + n * 1000).toISOString();
  const id = `bench-op-${String(n).padStart(7, '0')}`;
  return {
    id,
    tenantId: 'default',
    vnfInstanceId,
    operation: 'SCALE',
    operationState,
    stateEnteredTime: startTime,
    startTime,
    startSeq: `${startTime}#${id}`,
    isAutomaticInvocation: false,
    isCancelPending: false,
    apiMajorVersion: 2,
    revision: 1,
  };
}

/** A NOT_INSTANTIATED instance of the default tenant, as written straight to the table. */
export function benchInstance(n: number, vnfdId: string): Record<string, unknown> {
  const createdAt = new Date(Date.UTC(2026, 11, 1) + n * 1000).toISOString();
  const id = `bench-vnf-${String(n).padStart(6, '0')}`;
  return {
    id,
    tenantId: 'default',
    createdAt,
    createdSeq: `${createdAt}#${id}`,
    vnfdId,
    vnfProvider: 'Company',
    vnfProductName: 'Sample VNF',
    vnfSoftwareVersion: '1.0',
    vnfdVersion: '1.0',
    vnfPkgId: 'bench-package',
    vnfInstanceName: `bench-${n}`,
    instantiationState: 'NOT_INSTANTIATED',
    revision: 1,
  };
}

export async function benchListFilters(): Promise<void> {
  const vnfm = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: 'LogLevel=warn' } });
  try {
    const documents = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: vnfm.endpoints.dynamodb, region: vnfm.endpoints.region, credentials: vnfm.awsCredentials }),
    );
    // The watched instance's op occs are spread through the history, the rest belong to instances of 10 op occs each.
    // The watched instance's op occs (the watched VNFD's instances) are spread through the history; the rest come 10 to an instance (VNFD).
    const watched = (n: number, other: string) => (n % Math.floor(OP_OCCS / MATCHES) === 0 ? 'watched' : `${other}-${Math.floor(n / MATCHES)}`);
    const tables = {
      VnfLcmOpOccsTable: Array.from({ length: OP_OCCS }, (_, n) => benchOpOcc(n, watched(n, 'instance'), n % 7 === 0 ? 'FAILED_TEMP' : 'COMPLETED')),
      VnfInstancesTable: Array.from({ length: OP_OCCS }, (_, n) => benchInstance(n, watched(n, 'vnfd'))),
    };
    for (const [table, items] of Object.entries(tables)) {
      for (let i = 0; i < items.length; i += 25) {
        let pending = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
        while (pending.length) {
          const out = await documents.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
          pending = (out.UnprocessedItems?.[table] ?? []) as typeof pending;
        }
      }
    }
    documents.destroy();

    const call = client(vnfm);
    const timedGet = async (path: string, check: (body: unknown) => boolean): Promise<string> => {
      const samples: number[] = [];
      for (let i = 0; i < SAMPLES; i += 1) {
        const started = performance.now();
        const reply = await call('GET', path);
        samples.push(performance.now() - started);
        if (reply.status !== 200 || !check(reply.body)) throw new Error(`${path} answered ${reply.status}: ${reply.text.slice(0, 200)}`);
      }
      return summary(samples);
    };
    const timed = (collection: string, filter: string, expected: number) =>
      timedGet(`/vnflcm/v2/${collection}?filter=${encodeURIComponent(filter)}`, (body) => (body as unknown[]).length === expected);
    console.log(`Filtered lists among ${OP_OCCS} op occs and ${OP_OCCS} VNF instances (admin caller, local runtime)`);
    console.log(
      `GET /vnf_lcm_op_occs/{id} (the floor: one read)        ${await timedGet('/vnflcm/v2/vnf_lcm_op_occs/bench-op-0000001', (body) => (body as { id: string }).id === 'bench-op-0000001')}`,
    );
    for (const [collection, attribute] of [
      ['vnf_lcm_op_occs', 'vnfInstanceId'],
      ['vnf_instances', 'vnfdId'],
    ] as const) {
      const line = (filter: string, expected: number, how: string) =>
        timed(collection, filter, expected).then((figures) =>
          console.log(`GET /${collection} ${filter.replace(/watched|nothing/g, 'X').padEnd(24)} ${String(expected).padStart(2)} match  ${figures}   (${how})`),
        );
      await line(`(eq,${attribute},watched)`, MATCHES, 'index');
      await line(`(eq,${attribute},nothing)`, 0, 'index');
      await line(`(in,${attribute},watched,watched)`, MATCHES, 'index, one query per value');
      await line(`(in,${attribute},nothing,nothing)`, 0, 'index, one query per value');
    }
  } finally {
    await vnfm.stop();
  }
}
