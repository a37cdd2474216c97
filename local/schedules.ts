// Scheduled events locally (SAM `Schedule` / `ScheduleV2` event sources, EventBridge rules and
// Scheduler schedules on AWS): one timer per schedule event with a `rate(...)` expression, its
// period multiplied by VNFM_SCHEDULE_SCALE (default 1; 0 turns the timers off), and a control
// endpoint `POST /_local/schedules/{functionLogicalId}/run` that runs a function's schedule now
// and answers with the function's result, so tests trigger a sweep deterministically.
import type http from 'node:http';
import type { LocalFunction } from './lambda.ts';

interface ScheduleEvent {
  fn: LocalFunction;
  eventName: string;
  expression: string;
  input?: unknown;
  enabled: boolean;
}

export interface LocalSchedules {
  /** Registers a function's Schedule/ScheduleV2 event (Properties as in the template, resolved). */
  add(fn: LocalFunction, eventName: string, properties: Record<string, unknown>): void;
  /** Starts the timers (after every function is loaded). */
  start(): void;
  /** Serves /_local/schedules/...; false when the path is not one of its. */
  serve(method: string, path: string, res: http.ServerResponse): Promise<boolean>;
  /** Runs still in progress (for /_local/idle). */
  readonly inFlight: Set<Promise<unknown>>;
  close(): Promise<void>;
}

const UNITS: Record<string, number> = { minute: 60_000, minutes: 60_000, hour: 3_600_000, hours: 3_600_000, day: 86_400_000, days: 86_400_000 };

/** Milliseconds of `rate(5 minutes)`; undefined for cron() and at() (those only run on request locally). */
export function rateMs(expression: string): number | undefined {
  const match = /^rate\(\s*(\d+)\s+(minutes?|hours?|days?)\s*\)$/.exec(expression.trim());
  if (!match) return undefined;
  return Number(match[1]) * (UNITS[match[2] as string] as number);
}

export function startLocalSchedules(options: {
  invoke: (fn: LocalFunction, event: unknown) => Promise<unknown>;
  log: (line: string) => void;
  scale?: number;
}): LocalSchedules {
  const events: ScheduleEvent[] = [];
  const timers: NodeJS.Timeout[] = [];
  const inFlight = new Set<Promise<unknown>>();
  const scale = options.scale ?? Number(process.env.VNFM_SCHEDULE_SCALE ?? 1);

  const run = (event: ScheduleEvent): Promise<unknown> => {
    const payload = {
      version: '0',
      id: crypto.randomUUID(),
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: '000000000000',
      time: new Date().toISOString(),
      region: 'us-east-1',
      resources: [`arn:aws:events:us-east-1:000000000000:rule/${event.fn.logicalId}-${event.eventName}`],
      detail: event.input ?? {},
    };
    const invocation = options.invoke(event.fn, payload);
    inFlight.add(invocation);
    void invocation.catch(() => undefined).finally(() => inFlight.delete(invocation));
    return invocation;
  };

  return {
    inFlight,
    add(fn, eventName, properties) {
      const expression = String(properties.Schedule ?? properties.ScheduleExpression ?? '');
      const state = properties.State ?? (properties.Enabled === false ? 'DISABLED' : 'ENABLED');
      const input = typeof properties.Input === 'string' ? (JSON.parse(properties.Input) as unknown) : undefined;
      events.push({ fn, eventName, expression, input, enabled: state !== 'DISABLED' });
    },
    start() {
      if (!(scale > 0)) return;
      for (const event of events) {
        const period = rateMs(event.expression);
        if (!event.enabled || period === undefined) continue;
        // A sweep that overlaps the next tick is skipped, as one slow Lambda run would not be doubled up locally.
        let running = false;
        const timer = setInterval(
          () => {
            if (running) return;
            running = true;
            void run(event)
              .catch((error: unknown) =>
                options.log(`scheduled function ${event.fn.logicalId} failed: ${error instanceof Error ? error.stack : String(error)}`),
              )
              .finally(() => {
                running = false;
              });
          },
          Math.max(10, period * scale),
        );
        timer.unref();
        timers.push(timer);
      }
    },
    async serve(method, path, res) {
      const match = /^\/_local\/schedules\/([^/]+)\/run$/.exec(path);
      if (!match && path !== '/_local/schedules') return false;
      if (!match && method === 'GET') {
        res
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end(JSON.stringify(events.map((e) => ({ function: e.fn.logicalId, event: e.eventName, expression: e.expression, enabled: e.enabled }))));
        return true;
      }
      let logicalId: string | undefined;
      try {
        logicalId = decodeURIComponent(match?.[1] ?? '');
      } catch {
        logicalId = undefined; // bad percent-encoding names no function
      }
      const wanted = events.filter((e) => e.fn.logicalId === logicalId);
      if (method !== 'POST' || !wanted.length) {
        res
          .writeHead(404, { 'Content-Type': 'application/problem+json' })
          .end(JSON.stringify({ status: 404, detail: `No scheduled function ${match?.[1] ?? ''} (${method} ${path})` }));
        return true;
      }
      try {
        const results = [];
        for (const event of wanted) results.push(await run(event));
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(results.length === 1 ? results[0] : results));
      } catch (error) {
        res
          .writeHead(500, { 'Content-Type': 'application/problem+json' })
          .end(JSON.stringify({ status: 500, detail: error instanceof Error ? error.message : String(error) }));
      }
      return true;
    },
    async close() {
      for (const timer of timers) clearInterval(timer);
      await Promise.allSettled([...inFlight]);
    },
  };
}
