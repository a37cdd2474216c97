// A tiny load balancer for blue-green demos and tests, on the simulator's port under /_lb/: named
// pools of members (an address and the Nova server behind it) that a CoordinateVNF script switches
// over HTTP, and a backend endpoint that answers one live member, or 503 when there is none, which
// is what an availability probe asks. A member is live when its server exists in the simulated
// Nova, is ACTIVE, and has a port with that address: a server being rebuilt, replaced or deleted
// is not. Writes take HTTP Basic credentials of a Keystone user (admin/devstack); reads are open.
import { isIP } from 'node:net';
import { z } from 'zod';
import { json, Router, type SimReply, type SimRequest } from './http.ts';
import { ApiError, type Cloud } from './state.ts';

export interface LbMember {
  address: string;
  serverId: string | null;
}

interface Pool {
  name: string;
  members: LbMember[];
  /** Round-robin position of the backend endpoint. */
  next: number;
  updatedAt: number;
}

const POOL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

const membersBody = z
  .object({
    members: z
      .array(
        z
          .object({
            address: z.string().refine((value) => isIP(value) !== 0, 'must be an IPv4 or IPv6 address'),
            serverId: z.string().min(1).nullish(),
          })
          .strict(),
      )
      .max(256),
  })
  .strict();

export function lbError(err: ApiError): SimReply {
  return json(err.status, { error: { code: err.status, message: err.message } });
}

export class LoadBalancer {
  readonly router = new Router<undefined>();
  readonly #pools = new Map<string, Pool>();

  constructor(private readonly cloud: Cloud) {
    this.#routes();
  }

  /** Answers a request whose path is below /_lb. */
  async handle(req: SimRequest): Promise<SimReply> {
    try {
      const found = this.router.find(req.method, req.path);
      if (found === undefined) throw new ApiError(404, `no load balancer endpoint ${req.method} /_lb${req.path}`);
      if (found === 'method') throw new ApiError(405, `${req.method} is not allowed on /_lb${req.path}`);
      return await found.handler(req, found.params, undefined);
    } catch (err) {
      if (err instanceof ApiError) return lbError(err);
      throw err;
    }
  }

  /** Whether the member's server is there to serve: ACTIVE in Nova with a port holding the address. */
  live(member: LbMember): boolean {
    const { nova, neutron } = this.cloud;
    const serverIds = member.serverId
      ? [member.serverId]
      : [...neutron.ports.values()].filter((port) => port.fixedIps.some((ip) => ip.ipAddress === member.address)).map((port) => port.deviceId);
    return serverIds.some((id) => {
      const server = nova.servers.get(id);
      if (server?.status !== 'ACTIVE' || server.deleting) return false;
      return server.ports.some(({ portId }) => neutron.ports.get(portId)?.fixedIps.some((ip) => ip.ipAddress === member.address));
    });
  }

  #authorize(req: SimRequest): void {
    const header = req.headers.authorization;
    const match = typeof header === 'string' ? /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header.trim()) : null;
    const decoded = match ? Buffer.from(match[1] as string, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    const [username, password] = colon < 0 ? ['', ''] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
    if (!this.cloud.keystone.users.some((user) => user.name === username && user.password === password)) {
      throw new ApiError(401, 'The load balancer needs the username and password of a Keystone user (HTTP Basic) to change a pool.');
    }
  }

  #pool(name: string): Pool {
    const pool = this.#pools.get(name);
    if (!pool) throw new ApiError(404, `no pool ${name}`);
    return pool;
  }

  #body(pool: Pool): Record<string, unknown> {
    return {
      name: pool.name,
      members: pool.members.map((member) => ({ ...member, live: this.live(member) })),
      updatedAt: new Date(pool.updatedAt).toISOString(),
    };
  }

  #routes(): void {
    const r = this.router;
    r.on('GET', '/pools', () => json(200, { pools: [...this.#pools.values()].map((pool) => this.#body(pool)) }));
    r.on('GET', '/pools/:name', (_req, { name = '' }) => json(200, this.#body(this.#pool(name))));
    r.on('PUT', '/pools/:name/members', async (req, { name = '' }) => {
      this.#authorize(req);
      if (!POOL_NAME.test(name)) throw new ApiError(400, `invalid pool name ${JSON.stringify(name)}: letters, digits, "_.-", at most 128 characters`);
      const parsed = membersBody.safeParse(await req.json());
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new ApiError(400, `invalid members: ${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'unreadable'}`);
      }
      const members = parsed.data.members.map((member) => ({ address: member.address, serverId: member.serverId ?? null }));
      const duplicate = members.find((member, index) => members.findIndex((other) => other.address === member.address) !== index);
      if (duplicate) throw new ApiError(400, `invalid members: address ${duplicate.address} is listed twice`);
      const pool = this.#pools.get(name) ?? { name, members: [], next: 0, updatedAt: 0 };
      Object.assign(pool, { members, next: 0, updatedAt: Date.now() });
      this.#pools.set(name, pool);
      this.cloud.log(`lb: pool ${name} members ${members.map((member) => member.address).join(', ') || '(none)'}`);
      return json(200, this.#body(pool));
    });
    r.on('DELETE', '/pools/:name', (req, { name = '' }) => {
      this.#authorize(req);
      this.#pool(name);
      this.#pools.delete(name);
      return { status: 204 };
    });
    r.on('GET', '/pools/:name/backend', (_req, { name = '' }) => {
      const pool = this.#pool(name);
      for (let tried = 0; tried < pool.members.length; tried++) {
        const index = (pool.next + tried) % pool.members.length;
        const member = pool.members[index] as LbMember;
        if (!this.live(member)) continue;
        pool.next = index + 1;
        return json(200, { pool: name, ...member });
      }
      throw new ApiError(503, `pool ${name} has no live member (${pool.members.length} configured)`);
    });
  }
}
