// `npm run clients -- <command>`: the local runtime's OAuth 2.0 clients (VNFM_DATA_DIR, default
// ./.vnfm): create (prints the secret once), list, rotate, delete. A running VNFM refuses a
// rotated or deleted client's old tokens and secret within AUTH_CLIENT_STATE_TTL_SECONDS (5 s).
// On AWS the clients are Cognito app clients (README "Security model" has the commands); after
// rotating or deleting one there, `rotated <clientId>` / `deleted <clientId>` with CLIENTS_TABLE
// set record it in the stack's clients table, which the API checks.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createLocalClient, deleteLocalClient, readClients, rotateLocalClientSecret } from '#local/oauth2.ts';
import { recordClientState, rotationOf } from '#lib/auth/client-state.ts';

const dataDir = resolve(process.env.VNFM_DATA_DIR ?? '.vnfm');
const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { tenant: { type: 'string' }, scopes: { type: 'string' }, id: { type: 'string' } },
});
const [command, target] = positionals;

switch (command) {
  case 'create': {
    if (!values.tenant || !values.scopes) throw new Error('create needs --tenant <id> --scopes <scope,scope,...>');
    const created = createLocalClient(dataDir, {
      tenantId: values.tenant,
      scopes: values.scopes
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      clientId: values.id,
    });
    process.stdout.write(`${JSON.stringify({ ...created, tenantId: values.tenant }, null, 2)}\n`);
    break;
  }
  case 'list':
    for (const c of readClients(dataDir)) process.stdout.write(`${c.clientId}\t${c.tenantId}\t${c.scopes.join(',')}\t${c.createdAt}\n`);
    break;
  case 'rotate':
    if (!target) throw new Error('rotate needs a client id');
    process.stdout.write(`${JSON.stringify({ clientId: target, clientSecret: rotateLocalClientSecret(dataDir, target) }, null, 2)}\n`);
    break;
  case 'delete':
    if (!target) throw new Error('delete needs a client id');
    deleteLocalClient(dataDir, target);
    break;
  case 'rotated':
  case 'deleted':
    if (!target) throw new Error(`${command} needs a client id`);
    await recordClientState(command === 'deleted' ? { clientId: target, deleted: true } : await rotationOf(target));
    process.stdout.write(`Recorded in ${process.env.CLIENTS_TABLE}: client ${target} ${command}\n`);
    break;
  default:
    process.stderr.write(
      'usage: npm run clients -- create --tenant <id> --scopes <a,b> [--id <clientId>] | list | rotate <clientId> | delete <clientId>\n' +
        '       CLIENTS_TABLE=<table> npm run clients -- rotated <clientId> | deleted <clientId>   (AWS: after the Cognito change)\n',
    );
    process.exitCode = 2;
}
