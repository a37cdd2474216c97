// The fixed cost of one request to the local DynamoDB (dynalite behind the SigV4 check): medians of
// raw DynamoDBClient calls from this process (Query of 0, 1 and 100 items on VnfInstancesTable's
// byTenant index, GetItem, PutItem) and of a GET of a missing instance through the API, after
// BENCH_DDB_INSTANCES (default 300) instances were created through POST /vnflcm/v2/vnf_instances.
// Each figure also gives the runtime's CPU time per call (/proc, Linux), steadier than latency on a
// shared machine. The last line printed is one JSON object with the figures.
// Run: node --import tsx bench/dynamodb-requests.ts  (BENCH_DDB_SAMPLES calls per figure, default 400;
// BENCH_DDB_ONLY=<label prefix> times only those calls; BENCH_DDB_PROFILE=<dir> has the runtime write a
// CPU profile there when it stops)
import { CreateTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand, QueryCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { client, seedPackage, startVnfm } from '../test/support/runtime.ts';
import { cpuMs } from './openstack-lifecycles.ts';
import { median } from './stats.ts';

const INSTANCES = Number(process.env.BENCH_DDB_INSTANCES ?? 300);
const SAMPLES = Number(process.env.BENCH_DDB_SAMPLES ?? 400);
/** Times only the calls whose label starts with this (profiling one kind of call). */
const ONLY = process.env.BENCH_DDB_ONLY;

/** The call's median latency and the runtime's CPU time per call (steadier than latency on a shared machine). */
async function timed(label: string, pid: number, call: () => Promise<unknown>): Promise<{ ms: number; cpuMs: number }> {
  if (ONLY && !label.startsWith(ONLY)) return { ms: 0, cpuMs: 0 };
  for (let i = 0; i < 50; i += 1) await call();
  const times: number[] = [];
  const cpuBefore = cpuMs(pid);
  for (let i = 0; i < SAMPLES; i += 1) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  const cpu = (cpuMs(pid) - cpuBefore) / SAMPLES;
  const m = median(times);
  console.log(`${label.padEnd(28)} median ${m.toFixed(3)} ms, runtime CPU ${cpu.toFixed(3)} ms a call`);
  return { ms: Number(m.toFixed(3)), cpuMs: Number(cpu.toFixed(3)) };
}

// BENCH_DDB_PROFILE=<dir>: the runtime writes a CPU profile there when it stops.
const profile = process.env.BENCH_DDB_PROFILE;
const vnfm = await startVnfm({
  env: { VNFM_PARAMETER_OVERRIDES: 'LogLevel=warn', ...(profile ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profile}` } : {}) },
});
try {
  const call = client(vnfm);
  const pkg = await seedPackage(vnfm);
  const ids: string[] = [];
  let n = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (n < INSTANCES) {
        const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: pkg.vnfdId, vnfInstanceName: `bench-${n++}` } });
        if (reply.status !== 201) throw new Error(`POST answered ${reply.status}: ${reply.text}`);
        ids.push((reply.body as { id: string }).id);
      }
    }),
  );
  const ddb = new DynamoDBClient({ endpoint: vnfm.endpoints.dynamodb, region: vnfm.endpoints.region, credentials: vnfm.awsCredentials });
  const table = 'VnfInstancesTable';
  const record = (await ddb.send(new GetItemCommand({ TableName: table, Key: { id: { S: ids[0] as string } } }))).Item;
  const tenantId = record?.tenantId?.S;
  if (!tenantId) throw new Error(`no tenantId on ${JSON.stringify(record)}`);
  const query = (tenant: string, limit: number) =>
    ddb.send(
      new QueryCommand({
        TableName: table,
        IndexName: 'byTenant',
        KeyConditionExpression: 'tenantId = :t',
        ExpressionAttributeValues: { ':t': { S: tenant } },
        Limit: limit,
      }),
    );
  const check = async (limit: number, tenant: string, expected: number) => {
    const count = (await query(tenant, limit)).Items?.length;
    if (count !== expected) throw new Error(`Query answered ${count} items, not ${expected}`);
  };
  await check(100, tenantId, 100);
  await check(1, tenantId, 1);
  await check(100, 'no-such-tenant', 0);
  const results: Record<string, { ms: number; cpuMs: number }> = {};
  results.query0 = await timed('Query 0 items', vnfm.pid, () => query('no-such-tenant', 100));
  results.query1 = await timed('Query 1 item', vnfm.pid, () => query(tenantId, 1));
  results.query100 = await timed('Query 100 items', vnfm.pid, () => query(tenantId, 100));
  results.getItem = await timed('GetItem', vnfm.pid, () => ddb.send(new GetItemCommand({ TableName: table, Key: { id: { S: ids[1] as string } } })));
  // A table of its own for the writes (no index, read by nothing else).
  await ddb.send(
    new CreateTableCommand({
      TableName: 'BenchPuts',
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  await waitUntilTableExists({ client: ddb, maxWaitTime: 60, minDelay: 1 }, { TableName: 'BenchPuts' });
  let puts = 0;
  results.putItem = await timed('PutItem', vnfm.pid, () =>
    ddb.send(new PutItemCommand({ TableName: 'BenchPuts', Item: { id: { S: `bench-put-${puts++ % 100}` }, note: { S: 'x'.repeat(200) } } })),
  );
  results.apiGetMissing = await timed('GET missing instance (API)', vnfm.pid, () =>
    call('GET', '/vnflcm/v2/vnf_instances/00000000-0000-4000-8000-000000000000'),
  );
  console.log(JSON.stringify(results));
} finally {
  await vnfm.stop();
}
