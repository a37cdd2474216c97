// VNFC health on an OpenStack VIM: one paged `GET /servers/detail` per VIM (1,000 servers a page)
// answers for every VNFC of every instance on it. A server in ERROR or SHUTOFF, or one Nova no
// longer lists, is a fault; anything else (ACTIVE, BUILD, REBOOT, ...) is healthy or on its way. A
// server an OPERATE stopped (the instance's driver state says which) is SHUTOFF on purpose: healthy.
import * as z from 'zod';
import type { HealthReport, HealthTarget, VimConnection, VnfcHealth } from '#lib/vim/driver.ts';
import { OpenStackSession } from './keystone.ts';
import { stoppedServers } from './operate.ts';

const PAGE = 1000;

const serverList = z
  .object({
    servers: z.array(
      z
        .object({
          id: z.string(),
          status: z.string(),
          fault: z.object({ message: z.string().optional() }).passthrough().nullish(),
        })
        .passthrough(),
    ),
  })
  .passthrough();

type Server = z.infer<typeof serverList>['servers'][number];

const FAULTY = new Set(['ERROR', 'SHUTOFF']);

export async function openStackHealth(vim: VimConnection, targets: HealthTarget[]): Promise<HealthReport> {
  const session = new OpenStackSession(vim);
  const servers = new Map<string, Server>();
  let apiCalls = 0;
  let marker: string | undefined;
  for (;;) {
    const query = `?limit=${PAGE}${marker ? `&marker=${encodeURIComponent(marker)}` : ''}`;
    const response = await session.request('nova', 'compute', `/servers/detail${query}`, { what: 'listing servers for the VNFC health check' });
    apiCalls++;
    const page = await session.json('nova', response, serverList, 'listing servers');
    for (const server of page.servers) servers.set(server.id, server);
    if (page.servers.length < PAGE) break;
    marker = page.servers.at(-1)?.id;
  }
  const results: VnfcHealth[] = targets.flatMap((target) => {
    const stopped = stoppedServers(target.state);
    return target.vnfcs.map((vnfc): VnfcHealth => {
      const server = servers.get(vnfc.resourceId);
      const base = { vnfInstanceId: target.vnfInstanceId, vduId: vnfc.vduId, resourceId: vnfc.resourceId };
      if (!server) return { ...base, healthy: false, fault: 'MISSING', reason: `Nova server ${vnfc.resourceId} no longer exists` };
      // Stopped by an OPERATE: SHUTOFF is what it should be (an ERROR is still a fault).
      if (server.status === 'SHUTOFF' && stopped.has(server.id)) {
        return { ...base, healthy: true, vimStatus: server.status, reason: `Nova server ${server.id} is SHUTOFF, stopped by an OPERATE` };
      }
      if (FAULTY.has(server.status)) {
        const detail = server.fault?.message ? `: ${server.fault.message}` : '';
        return { ...base, healthy: false, fault: 'FAILED', vimStatus: server.status, reason: `Nova server ${server.id} is ${server.status}${detail}` };
      }
      return { ...base, healthy: true, vimStatus: server.status, reason: `Nova server ${server.id} is ${server.status}` };
    });
  });
  return { results, apiCalls };
}
