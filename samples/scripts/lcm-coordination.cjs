// LCM coordination from a VNF package's JavaScript CoordinateVNF script: one coordination action
// asked of the element manager the LCM request names (ETSI GS NFV-SOL 002 clause 10), through the
// same LcmCoordRequest the VNFM itself sends. Copy this file into the package beside the script
// (the script runner hands a script the files of its own directory) and use it from the script:
//
//   const { coordinate } = require('./lcm-coordination.cjs');   // or: import lcm from './lcm-coordination.cjs'
//   const input = JSON.parse(stdin);                               // what the runner writes on stdin
//   const coord = await coordinate(input, { name: 'reconfigure-vnfc', inputParams: { step: 1 } });
//   if (coord.coordinationResult !== 'CONTINUE') { ...print {"error": {"detail": ...}} and exit 1 }
//
// It reads the EM from the request the script is given, `input.request.additionalParams.lcmCoordination`
// (`endpoint`, the EM's API root, and `authentication`: BASIC or OAUTH2_CLIENT_CREDENTIALS), and the
// request skeleton from `input.lcmCoordRequest` (the op occ, the VNF instance and the VNFCs being
// coordinated as inputParams.vnfcInstanceIds). 201 is the result; 202 is read at its Location until
// it has one, 503 is asked again, both after their Retry-After; all within `maxWaitMs` (default 20 s,
// less than the runner's time limit). It returns the LcmCoord and throws when there is none.
//
// A script has no network unless the LCM request allows it: list the EM's address (an IP address and
// port, as the endpoint names it) in additionalParams.scriptNetworkAccess, and the token endpoint's
// too for OAuth 2.0. Plain Node (fetch), no modules.
'use strict';

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function retryAfterMs(response, fallback) {
  const value = response.headers.get('retry-after');
  if (!value) return fallback;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? fallback : Math.max(0, at - Date.now());
}

async function authorization(authentication) {
  if (!isObject(authentication) || !Array.isArray(authentication.authType)) return {};
  const oauth = authentication.paramsOauth2ClientCredentials;
  if (authentication.authType.includes('OAUTH2_CLIENT_CREDENTIALS') && isObject(oauth)) {
    const basic = Buffer.from(`${encodeURIComponent(oauth.clientId)}:${encodeURIComponent(oauth.clientPassword)}`).toString('base64');
    const response = await fetch(oauth.tokenEndpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json', Authorization: `Basic ${basic}` },
      body: 'grant_type=client_credentials',
    });
    if (response.status !== 200) throw new Error(`the EM's token endpoint answered ${response.status}`);
    const token = await response.json();
    return { Authorization: `Bearer ${token.access_token}` };
  }
  const basic = authentication.paramsBasic;
  if (authentication.authType.includes('BASIC') && isObject(basic))
    return { Authorization: `Basic ${Buffer.from(`${basic.userName}:${basic.password}`).toString('base64')}` };
  return {};
}

async function detailOf(response) {
  const text = await response.text().catch(() => '');
  try {
    return JSON.parse(text).detail ?? text;
  } catch {
    return text || `HTTP ${response.status}`;
  }
}

/**
 * Asks the EM for the coordination action `options.name` (with `options.inputParams` added to the
 * skeleton's) and returns its LcmCoord once it has a result.
 */
async function coordinate(input, options) {
  const params = input?.request?.additionalParams?.lcmCoordination;
  if (!isObject(params) || typeof params.endpoint !== 'string') throw new Error('the LCM request names no EM: additionalParams.lcmCoordination.endpoint');
  if (!isObject(input.lcmCoordRequest)) throw new Error('the input has no lcmCoordRequest (the VNFM gives it to CoordinateVNF scripts)');
  if (!options || typeof options.name !== 'string' || !options.name) throw new Error('coordinate(input, { name }): name the coordination action');
  const deadline = Date.now() + (options.maxWaitMs ?? 20_000);
  const skeleton = input.lcmCoordRequest;
  const inputParams = { ...skeleton.inputParams, ...options.inputParams };
  const body = JSON.stringify({ ...skeleton, coordinationActionName: options.name, ...(Object.keys(inputParams).length ? { inputParams } : {}) });
  const headers = { Accept: 'application/json', Version: '1.1.0', ...(await authorization(params.authentication)) };
  const url = `${params.endpoint.replace(/\/+$/, '')}/lcmcoord/v1/coordinations`;
  const wait = async (ms) => {
    if (Date.now() + ms > deadline) throw new Error(`no coordination result for ${options.name} within ${options.maxWaitMs ?? 20_000} ms`);
    await sleep(ms);
  };
  let location;
  for (;;) {
    const response = location
      ? await fetch(location, { headers })
      : await fetch(url, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body });
    if (response.status === 201 || response.status === 200) return response.json();
    if (response.status === 202) {
      location ??= new URL(response.headers.get('location') ?? '', url).href;
      await wait(retryAfterMs(response, 1000));
      continue;
    }
    if (response.status === 503 && !location) {
      await wait(retryAfterMs(response, 1000));
      continue;
    }
    throw new Error(`the EM answered ${response.status} to the coordination action ${options.name}: ${await detailOf(response)}`);
  }
}

module.exports = { coordinate };
