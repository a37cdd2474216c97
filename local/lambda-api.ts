// A local stand-in for the Lambda Invoke API (REST-JSON, `POST /2015-03-31/functions/{FunctionName}/invocations`),
// so a handler that invokes another function with @aws-sdk/client-lambda (the LCM engine invoking the script
// runner) works on the local runtime exactly as on AWS: the answer, `X-Amz-Function-Error: Unhandled` with
// Lambda's error JSON for a thrown error, 404 ResourceNotFoundException for an unknown function, the 6 MB limits.
// Like every stand-in it serves only requests signed with the runtime's credentials (local/sigv4.ts), and
// it drops the `requestContext.authorizer` of an event: only API Gateway's authorizer may set one.
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import { closeServer, listen } from './aws-json.ts';
import { ClientRequestError, createGuardedServer, readRequestBody, requestUrl } from './http-guard.ts';
import type { LocalFunction } from './lambda.ts';
import { refuseAsJson, sha256Hex, verifySignature, type AwsCredentials } from './sigv4.ts';

/** Lambda's synchronous invocation limit, request and response alike. */
const MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;
const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

export interface LocalLambdaApiOptions {
  functions: Iterable<LocalFunction>;
  /** Runs the function's handler with a Lambda context (the runtime's own invoke). */
  invoke(fn: LocalFunction, event: unknown): Promise<unknown>;
  /** The only credentials whose SigV4 signature it accepts. */
  credentials: AwsCredentials;
  log?: (line: string) => void;
  host?: string;
  port?: number;
}

export interface LocalLambdaApi {
  endpoint: string;
  close(): Promise<void>;
}

/** The function a FunctionName names: its name (the logical id locally), `name:qualifier`, or a full or partial ARN. */
function functionNamed(functions: LocalFunction[], name: string): LocalFunction | undefined {
  const arn = /^(?:arn:[^:]+:lambda:[^:]+:)?(?:\d{12}:)?function:([^:]+)(?::[^:]+)?$/.exec(name);
  const bare = arn ? arn[1] : name.split(':')[0];
  return functions.find((fn) => fn.logicalId === bare || fn.arn === name);
}

/**
 * The event without `requestContext.authorizer`: on AWS only API Gateway's authorizer puts verified
 * claims there, so an API event that arrives through Invoke carries none a caller could forge (the
 * API handlers then verify the request's own token, or answer 401).
 */
function withoutAuthorizer(event: unknown): unknown {
  const context = (event as { requestContext?: unknown } | null)?.requestContext;
  if (context !== null && typeof context === 'object' && 'authorizer' in context) delete (context as { authorizer?: unknown }).authorizer;
  return event;
}

export async function startLocalLambdaApi(options: LocalLambdaApiOptions): Promise<LocalLambdaApi> {
  const functions = [...options.functions];
  const send = (res: http.ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res
      .writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'x-amzn-RequestId': randomUUID(), ...headers })
      .end(body);
  };
  // Lambda's REST-JSON error: the type in x-amzn-ErrorType, {Type, Message} in the body.
  const fail = (res: http.ServerResponse, status: number, type: string, message: string) =>
    send(res, status, JSON.stringify({ Type: 'User', Message: message }), { 'x-amzn-ErrorType': type });

  const refuse = refuseAsJson('application/json');
  const serve = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = requestUrl(req);
    let body: Buffer;
    try {
      body = await readRequestBody(req, MAX_PAYLOAD_BYTES);
    } catch (error) {
      if (!(error instanceof ClientRequestError && error.status === 413)) throw error;
      fail(res, 413, 'RequestTooLargeException', `Request must be smaller than ${MAX_PAYLOAD_BYTES} bytes for the InvokeFunction operation`);
      req.destroy();
      return undefined;
    }
    const unsigned = verifySignature(req, { credentials: options.credentials, service: 'lambda', bodySha256: sha256Hex(body) });
    if (unsigned) return refuse(res, unsigned);
    const match = INVOKE_PATH.exec(url.pathname);
    if (req.method !== 'POST' || !match) return fail(res, 404, 'UnknownOperationException', `Unknown operation ${req.method ?? ''} ${url.pathname}`);
    let name: string;
    try {
      name = decodeURIComponent(match[1] as string);
    } catch {
      return fail(res, 400, 'ValidationException', 'The function name is not valid percent-encoding');
    }
    const fn = functionNamed(functions, name);
    if (!fn) return fail(res, 404, 'ResourceNotFoundException', `Function not found: ${name}`);
    let event: unknown = {};
    if (body.length) {
      try {
        event = withoutAuthorizer(JSON.parse(body.toString('utf8')));
      } catch {
        return fail(res, 400, 'InvalidRequestContentException', 'Could not parse request body into json');
      }
    }
    const type = String(req.headers['x-amz-invocation-type'] ?? 'RequestResponse');
    if (type === 'DryRun') return send(res, 204, '');
    if (type === 'Event') {
      options
        .invoke(fn, event)
        .catch((error: unknown) => options.log?.(`Lambda ${fn.logicalId} (Event) failed: ${error instanceof Error ? error.stack : String(error)}`));
      return send(res, 202, '');
    }
    const executed = { 'X-Amz-Executed-Version': '$LATEST' };
    let answer: string;
    try {
      answer = JSON.stringify(await options.invoke(fn, event)) ?? 'null';
    } catch (error) {
      const err = error instanceof Error ? error : new Error(String(error));
      const payload = { errorType: err.name, errorMessage: err.message, trace: (err.stack ?? '').split('\n') };
      return send(res, 200, JSON.stringify(payload), { ...executed, 'X-Amz-Function-Error': 'Unhandled' });
    }
    if (Buffer.byteLength(answer) > MAX_PAYLOAD_BYTES) {
      const payload = {
        errorType: 'Function.ResponseSizeTooLarge',
        errorMessage: `Response payload size exceeded maximum allowed payload size (${MAX_PAYLOAD_BYTES} bytes).`,
      };
      return send(res, 200, JSON.stringify(payload), { ...executed, 'X-Amz-Function-Error': 'Unhandled' });
    }
    return send(res, 200, answer, executed);
  };

  const server = createGuardedServer('Lambda API', serve, (line) => options.log?.(line));
  const { endpoint } = await listen(server, { name: 'Lambda', host: options.host, port: options.port });
  return { endpoint, close: () => closeServer(server) };
}
