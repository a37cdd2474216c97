// The egress policy: which addresses the VNFM may open connections to on a caller's behalf
// (notification callbacks, OAuth 2.0 token endpoints, upload_from_uri package sources). Cloud
// metadata services, link-local, multicast and reserved ranges are always refused; private and
// loopback ranges only when the deployment allows them (EgressAllowPrivateNetworks: false on AWS,
// true in the local runtime). Host names are resolved and every address is checked, and the HTTP
// client checks again at connection time (lookup hook), so DNS cannot be re-pointed in between.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';

export interface EgressPolicy {
  /** Allow private (RFC 1918, CGNAT, IPv6 ULA) and loopback addresses. */
  allowPrivateNetworks: boolean;
}

export class EgressDeniedError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`${url}: ${reason}`);
    this.name = 'EgressDeniedError';
  }
}

/** EGRESS_ALLOW_PRIVATE_NETWORKS comes from the template parameter EgressAllowPrivateNetworks. */
export function egressPolicyFromEnv(): EgressPolicy {
  return { allowPrivateNetworks: process.env.EGRESS_ALLOW_PRIVATE_NETWORKS === 'true' };
}

function blockList(ranges: Array<[string, number]>): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of ranges) list.addSubnet(network, prefix, isIP(network) === 6 ? 'ipv6' : 'ipv4');
  return list;
}

// Instance metadata services that do not sit in a link-local range.
const METADATA_ADDRESSES = new Set(['fd00:ec2::254', '100.100.100.200']);
const ALWAYS_DENIED = blockList([
  ['169.254.0.0', 16], // link-local: AWS/GCP/Azure/OpenStack metadata at 169.254.169.254
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
  ['fe80::', 10], // IPv6 link-local
  ['ff00::', 8], // IPv6 multicast
  ['::', 128], // unspecified
]);
const LOOPBACK = blockList([
  ['127.0.0.0', 8],
  ['::1', 128],
]);
const PRIVATE = blockList([
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16], // RFC 1918
  ['100.64.0.0', 10], // carrier-grade NAT
  ['198.18.0.0', 15], // benchmarking
  ['fc00::', 7], // IPv6 unique local
]);

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible or NAT64 (64:ff9b::/96) IPv6 address. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const high = parseInt(hex[1] as string, 16);
  const low = parseInt(hex[2] as string, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Why an address may not be reached under the policy, or undefined when it may. */
export function deniedReason(address: string, policy: EgressPolicy): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0] ?? '';
  const family = isIP(bare);
  if (family === 0) return `"${address}" is not an IP address`;
  const v4 = family === 6 ? embeddedIpv4(bare) : undefined;
  if (v4 !== undefined) return deniedReason(v4, policy);
  const type = family === 6 ? 'ipv6' : 'ipv4';
  if (METADATA_ADDRESSES.has(bare.toLowerCase()) || ALWAYS_DENIED.check(bare, type)) {
    return `${bare} is a cloud metadata, link-local, multicast or reserved address, which is never allowed`;
  }
  if (!policy.allowPrivateNetworks) {
    if (LOOPBACK.check(bare, type)) return `${bare} is a loopback address (EgressAllowPrivateNetworks is false)`;
    if (PRIVATE.check(bare, type)) return `${bare} is a private address (EgressAllowPrivateNetworks is false)`;
  }
  return undefined;
}

/** Parses an http(s) URL an API consumer gave; refuses other schemes and embedded credentials. */
export function parseEgressUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EgressDeniedError(raw, 'not an absolute URI');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new EgressDeniedError(raw, `scheme "${url.protocol.replace(/:$/, '')}" is not allowed; use http or https`);
  if (url.username || url.password) throw new EgressDeniedError(raw, 'credentials in the URI are not allowed');
  return url;
}

/** Resolves the URL's host and checks every address it resolves to. */
export async function assertEgressAllowed(raw: string, policy: EgressPolicy): Promise<URL> {
  const url = parseEgressUrl(raw);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: LookupAddress[];
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true });
  } catch (error) {
    // Not a refusal: name resolution may work again later.
    throw new Error(`cannot resolve host "${host}": ${(error as Error).message}`, { cause: error });
  }
  if (addresses.length === 0) throw new Error(`host "${host}" has no address`);
  for (const { address } of addresses) {
    const reason = deniedReason(address, policy);
    if (reason) throw new EgressDeniedError(raw, reason);
  }
  return url;
}

/** A DNS lookup for http(s).request that fails the connection when any resolved address is denied. */
export function guardedLookup(policy: EgressPolicy): LookupFunction {
  return ((
    hostname: string,
    options: { all?: boolean; family?: number },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const denied = addresses.map(({ address }) => deniedReason(address, policy)).find(Boolean);
      if (denied) return callback(new EgressDeniedError(hostname, denied), '');
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(new EgressDeniedError(hostname, 'no address'), '');
      callback(null, first.address, first.family);
    });
  }) as LookupFunction;
}

export interface EgressRequest {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** How much of the response body to keep (64 KiB unless said otherwise); the rest is dropped and `truncated` set. */
  maxResponseBytes?: number;
  /** For an https server: a client certificate and its key (mutual TLS), and the CA to trust it by instead of the public ones (PEM). */
  tls?: { cert?: string; key?: string; ca?: string };
  /** A 2xx answer's body is handed over unread as `stream` (a CSAR); the time limit then applies to idle time only. */
  stream?: boolean;
}

export interface EgressResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body was longer than maxResponseBytes and `body` is only its beginning. */
  truncated?: boolean;
  /** With `stream` asked for and a 2xx answer: the body, to be read by the caller (`body` is then empty). */
  stream?: Readable;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * One HTTP request under the egress policy: the URL is checked, the connection's address is
 * checked again when it is resolved, redirects are not followed (a 3xx is the answer), and the
 * response body is read up to 64 KiB (or maxResponseBytes).
 */
export async function egressRequest(raw: string, request: EgressRequest, policy: EgressPolicy): Promise<EgressResponse> {
  const url = await assertEgressAllowed(raw, policy);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<EgressResponse>((resolve, reject) => {
    const deadline = setTimeout(
      () => req.destroy(Object.assign(new Error(`no answer within ${request.timeoutMs} ms`), { name: 'TimeoutError' })),
      request.timeoutMs,
    );
    const settle =
      <T>(fn: (value: T) => void) =>
      (value: T) => {
        clearTimeout(deadline);
        fn(value);
      };
    resolve = settle(resolve);
    reject = settle(reject);
    const req = transport.request(
      url,
      {
        method: request.method,
        headers: { ...request.headers, ...(request.body !== undefined ? { 'Content-Length': String(Buffer.byteLength(request.body)) } : {}) },
        lookup: guardedLookup(policy),
        timeout: request.timeoutMs,
        ...(request.tls && url.protocol === 'https:' ? request.tls : {}),
        // A connection per request: callbacks are few and far between, and a pooled socket would outlive the policy check.
        agent: false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (request.stream && status >= 200 && status < 300) {
          resolve({ status, headers: res.headers, body: '', stream: res });
          return;
        }
        const chunks: Buffer[] = [];
        const limit = request.maxResponseBytes ?? MAX_RESPONSE_BYTES;
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= limit) chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            ...(size > limit ? { truncated: true } : {}),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error(`the connection was idle for ${request.timeoutMs} ms`), { name: 'TimeoutError' })));
    req.on('error', reject);
    req.end(request.body);
  });
}
