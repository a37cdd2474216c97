// Whether an OAuth 2.0 client may still call the API: a signed, unexpired token says only that it
// was good when issued. The clients table (CLIENTS_TABLE) records what changed since: a client
// deleted, or its secret rotated at `notBefore` (tokens issued earlier were issued to the old
// secret). On AWS the `clients` operations write it beside Cognito's own change; locally the
// runtime keeps it in step with its client store. Every API request checks its client here,
// read at most once per client per few seconds (AUTH_CLIENT_STATE_TTL_SECONDS, default 5).
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, requiredEnv } from '#lib/store/dynamo.ts';
import { ProblemError } from '#lib/sol/errors.ts';

export interface ClientState {
  clientId: string;
  /** Tokens issued (iat, epoch seconds) before this were issued to a secret that has been rotated away. */
  notBefore?: number;
  /** The client is gone: none of its tokens or secrets is accepted. */
  deleted?: boolean;
}

/** No record: the client has not changed since it was created (Cognito's own clients, the first admin). */
const UNCHANGED = (clientId: string): ClientState => ({ clientId });

export function clientStateTtlMs(): number {
  const seconds = Number(process.env.AUTH_CLIENT_STATE_TTL_SECONDS ?? 5);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 5000;
}

const MAX_CACHED = 10_000;
const cache = new Map<string, { state: Promise<ClientState>; until: number }>();

async function readClientState(clientId: string): Promise<ClientState> {
  try {
    const { Item } = await documentClient().send(new GetCommand({ TableName: requiredEnv('CLIENTS_TABLE'), Key: { clientId } }));
    return Item
      ? { clientId, notBefore: typeof Item.notBefore === 'number' ? Item.notBefore : undefined, deleted: Item.deleted === true }
      : UNCHANGED(clientId);
  } catch (error) {
    // Fail closed: a client whose revocation cannot be looked up is not let in.
    throw new ProblemError(503, 'Service Unavailable', "The client's current state cannot be read; try again shortly", {
      cause: error,
      headers: { 'Retry-After': '1' },
    });
  }
}

/** The client's state, from the cache while it is younger than the TTL; concurrent requests share one read. */
export function currentClientState(clientId: string, now = Date.now()): Promise<ClientState> {
  const cached = cache.get(clientId);
  if (cached && cached.until > now) return cached.state;
  if (cache.size >= MAX_CACHED) cache.clear();
  const state = readClientState(clientId);
  cache.set(clientId, { state, until: now + clientStateTtlMs() });
  state.catch(() => cache.delete(clientId));
  return state;
}

/** Why a token issued at `issuedAt` (epoch seconds) to this client is no longer accepted, or undefined when it is. */
export function revocationReason(state: ClientState, issuedAt: number | undefined): string | undefined {
  if (state.deleted) return 'The client has been deleted';
  if (state.notBefore !== undefined && (issuedAt === undefined || issuedAt < state.notBefore))
    return "The client's secret has been rotated since this token was issued";
  return undefined;
}

/**
 * The notBefore of a rotation made now: the next whole second. Tokens issued from then on belong to
 * the new secret (an issuer dates them no earlier), every token issued until now is older; iat has
 * whole seconds only, hence the step.
 */
export function nextSecond(now = Date.now()): number {
  return Math.floor(now / 1000) + 1;
}

/**
 * The notBefore of a rotation of a client whose last recorded notBefore is `previous`: the next
 * whole second, and always later than `previous`. Tokens of the old secret may be dated at
 * `previous` (an issuer dates a client's tokens no earlier than its notBefore, which a creation or
 * rotation made a second ahead), so a rotation in that same second must still refuse them.
 */
export function rotatedNotBefore(previous: number | undefined, now = Date.now()): number {
  return Math.max(nextSecond(now), (previous ?? 0) + 1);
}

/** rotatedNotBefore for a rotation recorded straight into the clients table (`clients rotated`), from what it holds now. */
export async function rotationOf(clientId: string): Promise<ClientState> {
  return { clientId, notBefore: rotatedNotBefore((await readClientState(clientId)).notBefore) };
}

/**
 * Sets `set` (an UpdateExpression SET list over `values`) on a client's item, and its notBefore when
 * given, never moving a recorded notBefore back: whoever writes later from an older view (the local
 * runtime following clients.json while `clients rotated` writes the table directly).
 */
export async function updateClient(clientId: string, set: string, values: Record<string, unknown>, notBefore?: number): Promise<void> {
  const TableName = requiredEnv('CLIENTS_TABLE');
  const Key = { clientId };
  const plain = () => documentClient().send(new UpdateCommand({ TableName, Key, UpdateExpression: `SET ${set}`, ExpressionAttributeValues: values }));
  if (notBefore === undefined) {
    await plain();
    return;
  }
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName,
        Key,
        UpdateExpression: `SET ${set}, notBefore = :nb`,
        ConditionExpression: 'attribute_not_exists(notBefore) OR notBefore <= :nb',
        ExpressionAttributeValues: { ...values, ':nb': notBefore },
      }),
    );
  } catch (error) {
    if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
    await plain();
  }
}

/** Records a secret rotation (tokens issued before `notBefore`, epoch seconds, stop working) or a deletion. */
export async function recordClientState(state: ClientState): Promise<void> {
  await updateClient(state.clientId, 'deleted = :d, updatedAt = :u', { ':d': state.deleted === true, ':u': new Date().toISOString() }, state.notBefore);
}
