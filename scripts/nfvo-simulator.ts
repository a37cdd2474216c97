// `npm run nfvo-simulator -- [--port 9990] [--grant sync|async|refuse] [--async-polls N]
// [--retry-after S] [--refuse-detail TEXT] [--client-id ID --client-secret SECRET]
// [--zone VDU=ZONE ...]`: the reference
// NFVO the tests use (test/support/nfvo-simulator.ts), on its own. It serves SOL003 granting (and,
// with a client id and secret, the OAuth 2.0 token endpoint its grant API then demands), prints how
// to point `npm start` at it and logs each request it answers (method, path, status, and what did
// not conform to SOL003) until Ctrl-C. The simulator listens on a port of its own choosing; a
// front on the asked port relays to it, so the URLs it hands out are the front's.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { type GrantBehaviour, startNfvoSimulator } from '../test/support/nfvo-simulator.ts';

const USAGE =
  'usage: npm run nfvo-simulator -- [--port 9990] [--host 127.0.0.1] [--grant sync|async|refuse] [--async-polls N] [--retry-after S] [--refuse-detail TEXT] [--client-id ID --client-secret SECRET] [--zone VDU=ZONE ...]';

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

function wholeNumber(value: string, option: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) fail(`${option} "${value}" is not a whole number`);
  return number;
}

const parsed = (() => {
  try {
    return parseArgs({
      options: {
        port: { type: 'string', default: '9990' },
        host: { type: 'string', default: '127.0.0.1' },
        grant: { type: 'string', default: 'sync' },
        'async-polls': { type: 'string', default: '2' },
        'retry-after': { type: 'string', default: '1' },
        'refuse-detail': { type: 'string', default: 'refused by the NFVO simulator' },
        'client-id': { type: 'string' },
        'client-secret': { type: 'string' },
        zone: { type: 'string', multiple: true, default: [] },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (error) {
    return fail((error as Error).message);
  }
})();
if (parsed.help) {
  console.log(USAGE);
  process.exit(0);
}
const port = wholeNumber(parsed.port, '--port');
const retryAfter = wholeNumber(parsed['retry-after'], '--retry-after');
const behaviours: Record<string, GrantBehaviour> = {
  sync: { kind: 'sync' },
  async: { kind: 'async', pending: wholeNumber(parsed['async-polls'], '--async-polls'), retryAfter },
  refuse: { kind: 'refuse', detail: parsed['refuse-detail'] },
};
const behaviour = behaviours[parsed.grant] ?? fail(`--grant "${parsed.grant}" is not one of ${Object.keys(behaviours).join(', ')}`);
const clientId = parsed['client-id'];
const clientSecret = parsed['client-secret'];
if (Boolean(clientId) !== Boolean(clientSecret)) fail('--client-id and --client-secret go together');

// Its "early poll" check scales Retry-After as the VNFM's Wait states do (npm start: 0.2).
const sim = await startNfvoSimulator({
  ...(clientId && clientSecret ? { clientId, clientSecret } : {}),
  waitScale: Number(process.env.VNFM_WAIT_SCALE ?? 0.2),
});
sim.behaviour = behaviour;
// --zone VDU1=az-1 --zone VDU2=az-2: each Grant lists the zones and places each VDU's new VNFCs in its own.
if (parsed.zone.length) {
  const placements = parsed.zone.map((entry) => /^([^=\s]+)=([^=\s]+)$/.exec(entry) ?? fail(`--zone "${entry}" is not VDU=ZONE`));
  const zoneIds = [...new Set(placements.map((match) => match[2] as string))];
  sim.grantZones = {
    zones: zoneIds.map((zoneId, n) => ({ id: `zone-${n + 1}`, zoneId })),
    vdus: Object.fromEntries(placements.map((match) => [match[1] as string, `zone-${zoneIds.indexOf(match[2] as string) + 1}`])),
  };
}
const backend = new URL(sim.url);
let reported = 0;

/** What a grant request asks for, for the log: "INSTANTIATE of VNF instance <id>". */
function grantSubject(body: Buffer): string {
  try {
    const request = JSON.parse(body.toString('utf8')) as { operation?: string; vnfInstanceId?: string };
    if (!request.operation) return '';
    return ` (${request.operation}${request.vnfInstanceId ? ` of VNF instance ${request.vnfInstanceId}` : ''})`;
  } catch {
    return '';
  }
}

const front = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const relay = http.request(
      { host: backend.hostname, port: backend.port, method: req.method, path: req.url, headers: { ...req.headers, host: backend.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('end', () => {
          const subject = req.method === 'POST' ? grantSubject(body) : '';
          console.log(`${new Date().toISOString()} ${req.method} ${req.url} ${answer.statusCode}${subject}`);
          for (const problem of sim.nonConforming.slice(reported)) console.log(`  not SOL003: ${problem}`);
          reported = sim.nonConforming.length;
        });
      },
    );
    relay.on('error', (error) => {
      res.writeHead(502, { 'Content-Type': 'text/plain' }).end(error.message);
    });
    relay.end(body);
  });
});
await new Promise<void>((resolveListen, reject) => {
  front.once('error', reject);
  front.listen(port, parsed.host, resolveListen);
});
const { port: bound } = front.address() as AddressInfo;
const url = `http://${parsed.host.includes(':') ? `[${parsed.host}]` : parsed.host}:${bound}`;
// The Locations and links it hands out name the front, which the VNFM reaches.
sim.url = url;

const grants =
  behaviour.kind === 'async'
    ? `answered 202, then polled ${behaviour.pending} time(s) with Retry-After ${retryAfter} s, then 200`
    : behaviour.kind === 'refuse'
      ? `refused (403: ${behaviour.detail})`
      : 'answered 201 at once';
const overrides = [`NfvoEndpoint=${url}`, ...(clientId ? [`NfvoTokenUrl=${url}/token`, `NfvoClientId=${clientId}`] : [])].join(' ');
console.log(`NFVO simulator listening on ${url}`);
console.log(`Grants (POST ${url}/grant/v1/grants) are ${grants}${clientId ? `; the grant API wants a bearer token from ${url}/token` : ''}.`);
console.log('Point the VNFM at it (NFVO_ENDPOINT is the NfvoEndpoint template parameter; npm start takes it as an override):');
if (clientId) console.log(`  printf '%s' '${clientSecret}' | npm run nfvo-secret -- set    # once the VNFM has started`);
console.log(`  VNFM_PARAMETER_OVERRIDES="${overrides}" npm start`);
console.log('Each request it answers is logged below; Ctrl-C stops it.');

async function stop(): Promise<void> {
  front.close();
  front.closeAllConnections();
  await sim.close();
  process.exit(0);
}
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
