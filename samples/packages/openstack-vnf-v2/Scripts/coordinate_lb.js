// CoordinateVNF script of Sample VNF 2.0 for a blue-green package change (seed 004): points the
// external load balancer's pool at the new VNFCs. Name it in the ChangeCurrentVnfPkgRequest as
// additionalParams["lcm-operation-coordinate-new-vnf"] (and, so that a rollback points the pool back,
// as "lcm-operation-coordinate-old-vnf" too), with
//   external_lb_param: { ip_address: "<base URL of the LB API, e.g. http://127.0.0.1:PORT/_lb>",
//                        pool: "<pool name>", username: "...", password: "..." }
//   vdu_params: [{ vdu_id: "VDU1", new_vnfc_param: { cp_name: "VDU1_CP1", ... }, old_vnfc_param: { cp_name: "VDU1_CP1", ... } }]
// The pool's members become the cp_name addresses of the VNFCs it is given (VNFCs of a VDU without
// a cp_name are not load balanced). It does that for the new VNF of a blue-green change, and for the
// old VNF when the change is rolled back; any other call (the old VNF going away, a rolling update)
// does nothing and succeeds.
//
// Contract: one JSON object on stdin (operation, request, vnfInstance, vnfc/vnfcs, vnfcParam,
// vduParams, externalLbParam, details, target, is_rollback); one JSON object on stdout:
// {"ok": true, ...} or {"error": {"detail": "..."}} with exit code 1. Logs go to stderr. Plain
// Node (no modules), so it runs as CommonJS or as an ES module alike.

const TIMEOUT_MS = 10_000;

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

async function readInput() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) throw new Error('no input on stdin: expected one JSON object');
  const input = JSON.parse(text);
  if (!isObject(input)) throw new Error('the input on stdin is not a JSON object');
  return input;
}

/** "new" or "old": as the engine says, else new when the VNFCs are not yet in the instance's records. */
function targetOf(input, vnfcs) {
  const said = input.target ?? input.details?.target;
  if (said === 'new' || said === 'old') return said;
  const recorded = new Set((input.vnfInstance?.instantiatedVnfInfo?.vnfcResourceInfo ?? []).map((info) => info?.computeResource?.resourceId));
  return vnfcs.length && vnfcs.every((vnfc) => recorded.has(vnfc.resourceId)) ? 'old' : 'new';
}

/** The connection point whose address goes into the pool, per VDU: vdu_params' new_vnfc_param (old_vnfc_param for the old VNF). */
function cpNameOf(input, additional, vduId, target) {
  const side = target === 'new' ? 'new_vnfc_param' : 'old_vnfc_param';
  const raw = input.vduParams ?? additional.vdu_params ?? [];
  const entry = (Array.isArray(raw) ? raw : [raw]).find((candidate) => isObject(candidate) && candidate.vdu_id === vduId);
  const param = isObject(entry?.[side]) ? entry[side] : undefined;
  const name = param?.cp_name ?? param?.['cp-name'];
  if (typeof name === 'string' && name) return name;
  // The engine's vnfcParam belongs to the first VNFC's VDU.
  if (vduId === input.vnfcs?.[0]?.vduId || vduId === input.vnfc?.vduId) {
    const given = input.vnfcParam?.cp_name ?? input.vnfcParam?.['cp-name'];
    if (typeof given === 'string' && given) return given;
  }
  return undefined;
}

function membersOf(input, additional, vnfcs, target) {
  const members = [];
  for (const vnfc of vnfcs) {
    const cpName = cpNameOf(input, additional, vnfc.vduId, target);
    if (!cpName) continue;
    for (const address of vnfc.addresses?.[cpName] ?? []) members.push({ address, serverId: vnfc.resourceId });
  }
  if (members.length === 0 && target === 'new' && Array.isArray(input.details?.externalLb?.members)) {
    for (const member of input.details.externalLb.members) if (typeof member?.address === 'string') members.push({ address: member.address, serverId: member.serverId ?? null });
  }
  return members;
}

/** The LB API's base URL: ip_address as given when it is a URL, else http://<ip_address>/_lb. */
function baseUrlOf(lb) {
  const given = String(lb.ip_address ?? lb.url ?? '').trim();
  if (!given) throw new Error('additionalParams.external_lb_param.ip_address is not set: the load balancer to switch is unknown');
  return (/^https?:\/\//i.test(given) ? given : `http://${given}/_lb`).replace(/\/+$/, '');
}

async function answerText(response) {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text);
    return body?.error?.message ?? body?.error?.detail ?? body?.message ?? text;
  } catch {
    return text.trim().slice(0, 300) || response.statusText;
  }
}

async function switchPool(lb, members) {
  const pool = typeof lb.pool === 'string' && lb.pool ? lb.pool : 'default';
  const url = `${baseUrlOf(lb)}/pools/${encodeURIComponent(pool)}/members`;
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  if (lb.username !== undefined || lb.password !== undefined) {
    headers.authorization = `Basic ${Buffer.from(`${lb.username ?? ''}:${lb.password ?? ''}`).toString('base64')}`;
  }
  let response;
  try {
    response = await fetch(url, { method: 'PUT', headers, body: JSON.stringify({ members }), signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    const cause = error?.cause?.code ?? error?.cause?.message ?? error?.message ?? String(error);
    throw new Error(`cannot reach the load balancer at ${url}: ${cause}`);
  }
  if (!response.ok) throw new Error(`the load balancer at ${url} refused to switch pool ${pool}: HTTP ${response.status}: ${await answerText(response)}`);
  return { pool, url };
}

async function main() {
  const input = await readInput();
  const request = isObject(input.request) ? input.request : {};
  const additional = isObject(request.additionalParams) ? request.additionalParams : {};
  const vnfcs = Array.isArray(input.vnfcs) ? input.vnfcs : isObject(input.vnfc) ? [input.vnfc] : [];
  const target = targetOf(input, vnfcs);
  const rollback = input.is_rollback === true;
  const blueGreen = String(additional.upgrade_type ?? '').replace(/[-_\s]/g, '').toLowerCase() === 'bluegreen';
  const switching = blueGreen && (rollback ? target === 'old' : target === 'new');
  if (!switching) {
    return { ok: true, action: 'none', target, isRollback: rollback, reason: blueGreen ? `nothing to do for the ${target} VNF` : 'not a blue-green change' };
  }
  const lb = isObject(input.externalLbParam) ? input.externalLbParam : isObject(additional.external_lb_param) ? additional.external_lb_param : undefined;
  if (!lb) throw new Error('additionalParams.external_lb_param is not set: the load balancer to switch is unknown');
  const members = membersOf(input, additional, vnfcs, target);
  if (members.length === 0) {
    throw new Error(`none of the ${vnfcs.length} VNFCs has an address on the connection point named by vdu_params[].${target === 'new' ? 'new' : 'old'}_vnfc_param.cp_name: nothing to put in the pool`);
  }
  const { pool } = await switchPool(lb, members);
  process.stderr.write(`coordinate_lb: pool ${pool} now has ${members.map((member) => member.address).join(', ')}\n`);
  return { ok: true, action: 'switched', target, isRollback: rollback, pool, members };
}

main().then(
  (output) => {
    process.stdout.write(`${JSON.stringify(output)}\n`);
  },
  (error) => {
    process.stdout.write(`${JSON.stringify({ error: { detail: `coordinate_lb: ${error instanceof Error ? error.message : String(error)}` } })}\n`);
    process.exitCode = 1;
  },
);
