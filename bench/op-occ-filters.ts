// The filtered op occ lists an NFVO sends while it waits for an operation: GET /vnf_lcm_op_occs
// with (eq,vnfInstanceId,X) matching 10 op occs, and with an instance that has none, among
// BENCH_OP_OCCS op occs (written straight into the local runtime's table). The same lists with
// the instance written twice, (in,vnfInstanceId,X,X), are read the way every filtered list was
// read before the index (the whole collection, filtered), for comparison in the same run.
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { client, startVnfm } from '../test/support/runtime.ts';
import { summary } from './stats.ts';

const OP_OCCS = Number(process.env.BENCH_OP_OCCS ?? 2_000);
const SAMPLES = Number(process.env.BENCH_OP_OCC_SAMPLES ?? 30);
const MATCHES = 10;

function opOcc(n: number, vnfInstanceId: string): Record<string, unknown> {
  const startTime = new Date(Date.UTC(2026, 11, 1) + n * 1000).toISOString();
  const id = `bench-op-${String(n).padStart(6, '0')}`;
  return {
    id,
    tenantId: 'default',
    vnfInstanceId,
    operation: 'SCALE',
    operationState: n % 7 === 0 ? 'FAILED_TEMP' : 'COMPLETED',
    stateEnteredTime: startTime,
    startTime,
    startSeq: `${startTime}#${id}`,
    isAutomaticInvocation: false,
    isCancelPending: false,
    apiMajorVersion: 2,
    revision: 1,
  };
}

export async function benchOpOccFilters(): Promise<void> {
  const vnfm = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: 'LogLevel=warn' } });
  try {
    const documents = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: vnfm.endpoints.dynamodb, region: vnfm.endpoints.region, credentials: vnfm.awsCredentials }),
    );
    // The watched instance's op occs are spread through the history, the rest belong to instances of 10 op occs each.
    const items = Array.from({ length: OP_OCCS }, (_, n) =>
      opOcc(n, n % Math.floor(OP_OCCS / MATCHES) === 0 ? 'watched-instance' : `instance-${Math.floor(n / MATCHES)}`),
    );
    for (let i = 0; i < items.length; i += 25) {
      let pending = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
      while (pending.length) {
        const out = await documents.send(new BatchWriteCommand({ RequestItems: { VnfLcmOpOccsTable: pending } }));
        pending = (out.UnprocessedItems?.VnfLcmOpOccsTable ?? []) as typeof pending;
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
    const timed = (filter: string, expected: number) =>
      timedGet(`/vnflcm/v2/vnf_lcm_op_occs?filter=${encodeURIComponent(filter)}`, (body) => (body as unknown[]).length === expected);
    const watched = MATCHES;
    console.log(`Filtered op occ lists among ${OP_OCCS} op occs (admin caller, local runtime)`);
    console.log(
      `GET /vnf_lcm_op_occs/{id} (the floor: one read)     ${await timedGet('/vnflcm/v2/vnf_lcm_op_occs/bench-op-000001', (body) => (body as { id: string }).id === 'bench-op-000001')}`,
    );
    console.log(`GET /vnf_lcm_op_occs (eq,vnfInstanceId,X), ${watched} match   ${await timed('(eq,vnfInstanceId,watched-instance)', watched)}   (index)`);
    console.log(`GET /vnf_lcm_op_occs (eq,vnfInstanceId,X), no match   ${await timed('(eq,vnfInstanceId,no-such-instance)', 0)}   (index)`);
    console.log(
      `GET /vnf_lcm_op_occs (in,vnfInstanceId,X,X), ${watched} match ${await timed('(in,vnfInstanceId,watched-instance,watched-instance)', watched)}   (whole collection, as before)`,
    );
    console.log(
      `GET /vnf_lcm_op_occs (in,vnfInstanceId,X,X), no match ${await timed('(in,vnfInstanceId,no-such-instance,no-such-instance)', 0)}   (whole collection, as before)`,
    );
  } finally {
    await vnfm.stop();
  }
}
