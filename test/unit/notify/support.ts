// What the notifier's unit tests share: a subscriber's callback that records what it receives (a
// real HTTP server on a free port, started and stopped with the suite), and notifier ports with an
// in-memory queue that records the deliveries and dead letters it is given.
import { after, before } from 'node:test';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NotificationFamily, NotifierDeps } from '#lib/notify/ports.ts';
import type { NotificationDelivery } from '#lib/notify/model.ts';

export interface ReceivedNotification {
  path: string;
  version?: string;
  body: Record<string, unknown>;
}

/** A callback answering 204 to everything; call at the top of a suite (it registers before/after). */
export function recordingCallback(): { received: ReceivedNotification[]; base(): string } {
  let server: http.Server | undefined;
  let base = '';
  const received: ReceivedNotification[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({
          path: req.url ?? '',
          version: req.headers.version as string | undefined,
          body: JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>,
        });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server?.close());
  return { received, base: () => base };
}

/** Notifier ports delivering `families`, with a queue that records deliveries (and their group) and dead letters (their reason). */
export function notifierHarness(families: NotificationFamily[]): {
  deps: NotifierDeps;
  queued: Array<{ delivery: NotificationDelivery; group: string }>;
  dead: string[];
} {
  const queued: Array<{ delivery: NotificationDelivery; group: string }> = [];
  const dead: string[] = [];
  const deps: NotifierDeps = {
    families,
    secrets: { create: async () => '', put: async () => '', read: async () => ({}), remove: async () => undefined },
    egress: { allowPrivateNetworks: true },
    now: () => '2026-12-01T10:00:00Z',
    newId: () => 'id',
    queue: {
      publish: async () => undefined,
      enqueueDeliveries: async (deliveries, group) => {
        queued.push(...deliveries.map((delivery) => ({ delivery, group })));
      },
      changeVisibility: async () => undefined,
      deadLetter: async (messages) => {
        dead.push(...messages.map((m) => m.reason.reason ?? ''));
      },
    },
    retryPeriodMs: 60_000,
    clock: () => 1_000_000,
  };
  return { deps, queued, dead };
}
