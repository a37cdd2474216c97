// A vendor script's network: none, unless the LCM request allows it host:port by host:port
// (`additionalParams.scriptNetworkAccess: ["10.10.0.5:443", ...]`, carried in the ScriptRequest as
// `network.allow`). In its own network namespace the script reaches an allowed address exactly as it
// was given: a forwarder inside (FORWARDER_SOURCE) listens on that address and hands each connection
// through a unix socket to a relay here, outside, which connects to the real host:port only when the
// egress policy allows the address and it is none of the product's own endpoints (the local
// stand-ins, the API): those are refused even when listed.
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { deniedReason, type EgressPolicy } from '#lib/egress.ts';
import { log } from '#lib/log.ts';

export interface NetworkAllowance {
  /** An IP address (scripts are given addresses: `ssh_ip`, `external_lb_param.ip_address`). */
  host: string;
  port: number;
}

/** At most this many host:port pairs per script. */
export const MAX_ALLOWANCES = 16;

/** `host:port` (`[v6]:port` for IPv6) as an allowance; throws with a sentence saying what is wrong. */
export function parseAllowance(text: string): NetworkAllowance {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text.trim());
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (!host || !(port >= 1 && port <= 65535)) throw new Error(`"${text}" is not host:port (an IPv6 address in brackets: [fd00::5]:443)`);
  if (net.isIP(host) === 0) throw new Error(`"${text}" names a host by name; give its IP address, the one the script connects to`);
  return { host, port };
}

/** `additionalParams.scriptNetworkAccess` of an LCM request: absent, or a list of host:port. */
export function allowancesOf(additionalParams: unknown): NetworkAllowance[] {
  const value =
    additionalParams !== null && typeof additionalParams === 'object' ? (additionalParams as Record<string, unknown>).scriptNetworkAccess : undefined;
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((entry) => typeof entry === 'string'))
    throw new Error('additionalParams.scriptNetworkAccess must be a list of "host:port" strings');
  if (value.length > MAX_ALLOWANCES) throw new Error(`additionalParams.scriptNetworkAccess allows at most ${MAX_ALLOWANCES} host:port pairs`);
  return value.map((entry) => {
    try {
      return parseAllowance(entry);
    } catch (error) {
      throw new Error(`additionalParams.scriptNetworkAccess: ${(error as Error).message}`);
    }
  });
}

/**
 * The product's own endpoints, which no script may reach: the AWS endpoint overrides (the local
 * stand-ins), the API (VNFM_API_URL, which the local runtime sets; on AWS the API is a public
 * endpoint that asks for credentials like any) and an external token issuer.
 */
export function productEndpoints(env: NodeJS.ProcessEnv = process.env): NetworkAllowance[] {
  const urls = Object.entries(env)
    .filter(([name]) => name.startsWith('AWS_ENDPOINT_URL') || ['VNFM_API_URL', 'AUTH_ISSUER', 'AUTH_JWKS_URL', 'AUTH_TOKEN_URL'].includes(name))
    .map(([, value]) => value);
  const endpoints: NetworkAllowance[] = [];
  for (const text of urls) {
    try {
      const url = new URL(text ?? '');
      const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
      endpoints.push({ host: url.hostname.replace(/^\[|\]$/g, ''), port });
    } catch {
      // not a URL: nothing to protect
    }
  }
  return endpoints;
}

/** This machine's own addresses: an endpoint listening on any of them (or on all) is reached through each. */
function localAddresses(): Set<string> {
  const addresses = new Set(['0.0.0.0', '::', 'localhost']);
  for (const list of Object.values(networkInterfaces())) for (const entry of list ?? []) addresses.add(entry.address);
  return addresses;
}

/** Why the relay refuses to connect a script to `target`, or undefined when it may. */
export function relayRefusal(target: NetworkAllowance, policy: EgressPolicy, endpoints: NetworkAllowance[]): string | undefined {
  const denied = deniedReason(target.host, policy);
  if (denied) return denied;
  const local = localAddresses();
  const isLocal = (host: string) => local.has(host) || /^127\./.test(host) || host === '::1';
  const product = endpoints.find(
    (endpoint) => endpoint.port === target.port && (endpoint.host === target.host || (isLocal(endpoint.host) && isLocal(target.host))),
  );
  return product ? `${target.host}:${target.port} is one of the VNFM's own endpoints, which scripts may never reach` : undefined;
}

export interface Relays {
  /** The unix socket of each allowance, in order, under the directory given. */
  sockets: string[];
  close(): Promise<void>;
}

/** Listens on one unix socket per allowance in `dir`; each connection is relayed to its host:port if relayRefusal allows it, else closed. */
export async function startRelays(
  dir: string,
  allow: NetworkAllowance[],
  policy: EgressPolicy,
  endpoints: NetworkAllowance[] = productEndpoints(),
): Promise<Relays> {
  await mkdir(dir, { recursive: true, mode: 0o711 });
  const servers: net.Server[] = [];
  const open = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const sockets = await Promise.all(
    allow.map(
      (target, index) =>
        new Promise<string>((resolve, reject) => {
          const path = join(dir, `${index}.sock`);
          const server = net.createServer({ allowHalfOpen: true }, (inbound) => {
            track(inbound);
            const refusal = relayRefusal(target, policy, endpoints);
            if (refusal) {
              log.warn('script connection refused', { host: target.host, port: target.port, reason: refusal });
              inbound.destroy();
              return;
            }
            const outbound = net.connect({ host: target.host, port: target.port, allowHalfOpen: true });
            track(outbound);
            outbound.on('error', () => inbound.destroy());
            inbound.on('error', () => outbound.destroy());
            inbound.pipe(outbound).pipe(inbound);
          });
          servers.push(server);
          server.once('error', reject);
          server.listen(path, () => resolve(path));
        }),
    ),
  );
  return {
    sockets,
    close: async () => {
      for (const socket of open) socket.destroy();
      await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
}

/**
 * Runs inside the sandbox (`node -e FORWARDER_SOURCE '<json>'`, json: [{host, port, socket}]): listens
 * on each host:port and pipes every connection to its unix socket. It writes a line to stdout once
 * all listen, which is how the sandbox knows the script may start. It is not a trust boundary: the relay
 * outside decides what a connection reaches.
 */
export const FORWARDER_SOURCE = `const net = require('node:net');
const entries = JSON.parse(process.argv[1]);
let waiting = entries.length;
for (const entry of entries) {
  net.createServer({ allowHalfOpen: true }, (inbound) => {
    const outbound = net.connect({ path: entry.socket, allowHalfOpen: true });
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
    inbound.pipe(outbound).pipe(inbound);
  }).listen(entry.port, entry.host, () => { if (--waiting === 0) require('node:fs').writeSync(1, 'ready\\n'); });
}`;
