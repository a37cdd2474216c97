// CoordinateVNF script of the Sample CNF 2.0 package (Vnflcm change_current_package, seed 004).
//
// Reads one JSON object on stdin, as the VNFM's script runner hands it:
//   {"operation": "change_current_package", "request": {"additionalParams": {...}},
//    "vnfInstance": {...}, "vnfcs": [{"vduId": "VDU1", "resourceId": "<pod>", ...}],
//    "details": {"services": ["vdu1-svc"], ...}, "target": "new", "is_rollback": false}
// and prints one JSON object saying which pods it coordinated. It reaches nothing: on Kubernetes the
// VNFM's driver switches the Service itself, so this script only records what it was told.
// For tests it fails on purpose (exit status 1) when request.additionalParams.coordinate_fail is true.
'use strict';

function fail(detail) {
  process.stdout.write(`${JSON.stringify({ error: { detail } })}\n`);
  process.exitCode = 1;
}

function coordinate(input) {
  const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(input)) return fail('coordinate_cnf: the input must be one JSON object');
  const request = isObject(input.request) ? input.request : {};
  const additionalParams = isObject(request.additionalParams) ? request.additionalParams : {};
  const isRollback = input.is_rollback === true;
  if (additionalParams.coordinate_fail === true) return fail(`coordinate_cnf: failed as requested (additionalParams.coordinate_fail)${isRollback ? ' during a rollback' : ''}`);
  const vnfcs = Array.isArray(input.vnfcs) ? input.vnfcs.filter(isObject) : [];
  const details = isObject(input.details) ? input.details : {};
  const vnfInstance = isObject(input.vnfInstance) ? input.vnfInstance : {};
  process.stdout.write(`${JSON.stringify({
    ok: true,
    operation: typeof input.operation === 'string' ? input.operation : 'change_current_package',
    target: input.target === 'old' ? 'old' : 'new',
    isRollback,
    vnfInstanceId: typeof vnfInstance.id === 'string' ? vnfInstance.id : null,
    coordinated: vnfcs.map((vnfc) => ({ vduId: vnfc.vduId ?? null, resourceId: vnfc.resourceId ?? null })),
    services: Array.isArray(details.services) ? details.services.map(String) : [],
  })}\n`);
}

let text = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { text += chunk; });
process.stdin.on('end', () => {
  let input;
  try {
    input = JSON.parse(text);
  } catch {
    return fail('coordinate_cnf: stdin is not JSON');
  }
  return coordinate(input);
});
