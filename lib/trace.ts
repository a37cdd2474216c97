// X-Ray tracing through Powertools Tracer, for the functions whose entry points import this module
// (lib/tracing.ts says how it plugs in; README "Traces" lists the functions). Each invocation is a
// subsegment `## <function>` of Lambda's own segment, annotated with ColdStart, Service and the
// correlation keys (opOccId, vnfInstanceId) as they become known; an error it throws is recorded on it.
// AWS SDK calls are subsegments beneath it. Responses are not recorded: they hold VNF instances, whose
// VIM connection info may carry credentials. Outgoing HTTP calls (VIMs, notifications) are not captured.
//
// The Tracer is off outside Lambda (no AWS_EXECUTION_ENV: the local runtime and tests), under `sam local`
// and with POWERTOOLS_TRACE_ENABLED=false, and is then not even loaded: loading the X-Ray SDK enables an
// async hook (cls-hooked) that every promise of the process would pay for, and 10-25 ms of CPU at init.
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { useTracing, type Tracing } from './tracing.ts';

type Segment = NonNullable<ReturnType<Tracer['getSegment']>>;

/** The tracing `tracer` gives (exported for tests, which build tracers of their own). */
export function tracingWith(tracer: Tracer): Tracing {
  return {
    captureClient: (client) => {
      tracer.captureAWSv3Client(client);
    },
    invocation: async (service, run) => {
      const parent: Segment | undefined = tracer.isTracingEnabled() ? tracer.getSegment() : undefined;
      if (!parent) return run();
      const subsegment = parent.addNewSubsegment(`## ${service}`);
      tracer.setSegment(subsegment);
      try {
        tracer.annotateColdStart();
        tracer.putAnnotation('Service', service);
        return await run();
      } catch (error) {
        tracer.addErrorAsMetadata(error as Error);
        throw error;
      } finally {
        subsegment.close();
        tracer.setSegment(parent);
      }
    },
    annotate: (keys) => {
      for (const [key, value] of Object.entries(keys)) tracer.putAnnotation(key, value);
    },
  };
}

/** Whether Powertools Tracer would be on in this environment (its own rule, checked without loading it). */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return (
    Boolean(env.AWS_EXECUTION_ENV) &&
    env.AWS_EXECUTION_ENV !== 'AWS_Lambda_amplify-mock' &&
    !env.AWS_SAM_LOCAL &&
    env.POWERTOOLS_TRACE_ENABLED?.toLowerCase() !== 'false'
  );
}

/** This function's Tracer; undefined where tracing is off. */
export const tracer: Tracer | undefined = tracingWanted()
  ? new (await import('@aws-lambda-powertools/tracer')).Tracer({ captureHTTPsRequests: false })
  : undefined;
if (tracer) useTracing(tracingWith(tracer));
