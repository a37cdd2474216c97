// Business metrics as CloudWatch embedded metric format (EMF) lines through Powertools Metrics:
// namespace Vnfm, a `service` dimension naming the function (as log lines do). LCM operations
// started, completed, failed and rolled back per operation type; notification deliveries.
//
// A handler wrapped in `instrumented` keeps its invocation's metrics (one Powertools Metrics per
// dimension set, as EMF applies a document's dimensions to all its metrics) and publishes them when
// it ends, however it ends; an invocation that recorded nothing writes nothing. Like the loggers,
// the store is the invocation's own (async context), as the local runtime runs invocations side by
// side in one process. A metric recorded outside an invocation is published at once. Recording a
// metric never fails the work it counts.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { DEFAULT_SERVICE, inInvocation, log, serviceOf } from './log.ts';
import { inTracedInvocation } from './tracing.ts';

const NAMESPACE = 'Vnfm';

type Dimensions = Record<string, string>;

interface InvocationMetrics {
  service: string;
  /** By dimension set (its JSON). */
  stored: Map<string, Metrics>;
}

const invocations = new AsyncLocalStorage<InvocationMetrics>();

function newMetrics(service: string, dimensions: Dimensions): Metrics {
  return new Metrics({ namespace: NAMESPACE, serviceName: service, defaultDimensions: dimensions });
}

function record(
  name: string,
  unit: (typeof MetricUnit)[keyof typeof MetricUnit],
  value: number,
  dimensions: Dimensions,
  outsideInvocation: 'publish' | 'drop' = 'publish',
): void {
  try {
    const invocation = invocations.getStore();
    if (!invocation) {
      if (outsideInvocation === 'drop') return;
      newMetrics(DEFAULT_SERVICE, dimensions).addMetric(name, unit, value).publishStoredMetrics();
      return;
    }
    const key = JSON.stringify(Object.entries(dimensions).sort(([a], [b]) => a.localeCompare(b)));
    let metrics = invocation.stored.get(key);
    if (!metrics) {
      metrics = newMetrics(invocation.service, dimensions);
      invocation.stored.set(key, metrics);
    }
    metrics.addMetric(name, unit, value);
  } catch (error) {
    log.warn('could not record a metric', { metric: name, error });
  }
}

/** Publishes the current invocation's metrics (instrumented does it at the end of every invocation). */
export function publishMetrics(): void {
  for (const metrics of invocations.getStore()?.stored.values() ?? []) {
    try {
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    } catch (error) {
      log.warn('could not publish metrics', { error });
    }
  }
}

/**
 * A Lambda handler with its invocation's logger (lib/log.ts: service, cold start, request id, and
 * the correlation keys `keysOf` finds in the event, such as an op occ's id) and metrics, published
 * when it returns or throws; in an X-Ray subsegment annotated with those keys where the function
 * traces (lib/tracing.ts).
 */
export function instrumented<Event, Result>(
  handler: (event: Event, context: Context) => Promise<Result>,
  keysOf?: (event: Event) => Record<string, unknown>,
): (event: Event, context?: Context) => Promise<Result> {
  return (event, context) =>
    inInvocation(context, () =>
      invocations.run({ service: serviceOf(context), stored: new Map() }, () =>
        inTracedInvocation(serviceOf(context), async () => {
          try {
            if (keysOf) log.appendKeys(keysOf(event));
            // Lambda always passes a context; a direct call (a test, a script) may not, as before.
            return await handler(event, context as Context);
          } finally {
            publishMetrics();
          }
        }),
      ),
    );
}

/** What an op occ's state says about its operation, as a metric: STARTING, COMPLETED, FAILED_TEMP, ROLLED_BACK. */
const OPERATION_METRICS: Record<string, string> = {
  STARTING: 'OperationsStarted',
  COMPLETED: 'OperationsCompleted',
  FAILED_TEMP: 'OperationsFailed',
  ROLLED_BACK: 'OperationsRolledBack',
};

/** Counts an LCM operation (INSTANTIATE, SCALE, ...) that reached `state`; states without a metric count nothing. */
export function countOperation(operation: string, state: string): void {
  const name = OPERATION_METRICS[state];
  if (name) record(name, MetricUnit.Count, 1, { operation });
}

export type DeliveryOutcome = 'Delivered' | 'Retried' | 'DeadLettered';

/** Counts a notification delivered to its subscriber, given back to the queue to retry, or dead-lettered. */
export function countNotification(outcome: DeliveryOutcome): void {
  record(`Notifications${outcome}`, MetricUnit.Count, 1, {});
}

/**
 * Times one call to a VIM's API (VimApiLatency, in milliseconds, with the VIM type and the API
 * called as dimensions), whether it answered or failed, and hands back what the call gave.
 */
export async function timedVimCall<T>(vimType: 'openstack' | 'kubernetes', api: string, call: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await call();
  } finally {
    // Only within a function's invocation: a tool or test driving a VIM directly publishes nothing.
    record('VimApiLatency', MetricUnit.Milliseconds, performance.now() - started, { vimType, api }, 'drop');
  }
}
