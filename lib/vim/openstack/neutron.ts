// A thin Neutron v2.0 client: what the driver reads of the ports it created, to report each external
// CP's real addresses (SOL003 CpProtocolInfo: MAC and fixed IPs as Neutron allocated them).
import * as z from 'zod';
import type { OpenStackSession } from './keystone.ts';

const portSchema = z
  .object({
    id: z.string(),
    mac_address: z.string().nullish(),
    fixed_ips: z.array(z.object({ subnet_id: z.string().nullish(), ip_address: z.string() }).passthrough()).nullish(),
  })
  .passthrough();
export type NeutronPort = z.infer<typeof portSchema>;

/** Neutron's catalog URL is unversioned (devstack: http://host/networking). */
const v2 = (base: string): string => (/\/v2\.0$/.test(base) ? base : `${base}/v2.0`);
/** Ids per list request: a query string of 50 UUIDs stays well under the usual 8 KB request-line limits. */
const IDS_PER_REQUEST = 50;

export class NeutronClient {
  constructor(private readonly session: OpenStackSession) {}

  /** The ports with these ids (those that exist), in as few requests as the query length allows. */
  async ports(ids: readonly string[]): Promise<NeutronPort[]> {
    const found: NeutronPort[] = [];
    const unique = [...new Set(ids)];
    for (let at = 0; at < unique.length; at += IDS_PER_REQUEST) {
      const query = new URLSearchParams([
        ...unique.slice(at, at + IDS_PER_REQUEST).map((id): [string, string] => ['id', id]),
        ['fields', 'id'],
        ['fields', 'mac_address'],
        ['fields', 'fixed_ips'],
      ]);
      const what = 'reading the ports of the VNF';
      const response = await this.session.request('neutron', 'network', `/ports?${query.toString()}`, { method: 'GET', what }, v2);
      found.push(...(await this.session.json('neutron', response, z.object({ ports: z.array(portSchema) }), what)).ports);
    }
    return found;
  }
}
