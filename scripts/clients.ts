// `npm run clients -- <command>`: the OAuth 2.0 clients of the deployment's own issuer: create
// (prints the secret once), list, rotate, delete. On AWS, with CLIENTS_TABLE naming the stack's
// clients table (and AWS credentials allowed to write it), the commands work on that table; the
// first admin client of a new deployment is created this way (README "Security model"). Locally
// (no CLIENTS_TABLE) they work on the runtime's client store (VNFM_DATA_DIR, default ./.vnfm),
// which a running VNFM follows. Either way a rotated or deleted client's old tokens and secret are
// refused within AUTH_CLIENT_STATE_TTL_SECONDS (5 s). With an external issuer (ExternalIssuer),
// `rotated <clientId>` / `deleted <clientId>` record a change made there.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient, deleteClient, listClients, rotateClient } from '#lib/auth/client-directory.ts';
import { recordClientState, rotationOf } from '#lib/auth/client-state.ts';
import { createLocalClient, deleteLocalClient, readClients, rotateLocalClientSecret } from '#local/oauth2.ts';

const dataDir = resolve(process.env.VNFM_DATA_DIR ?? '.vnfm');
const onTable = Boolean(process.env.CLIENTS_TABLE);
const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { tenant: { type: 'string' }, scopes: { type: 'string' }, id: { type: 'string' } },
});
const [command, target] = positionals;
const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

switch (command) {
  case 'create': {
    if (!values.tenant || !values.scopes) throw new Error('create needs --tenant <id> --scopes <scope,scope,...>');
    const options = {
      tenantId: values.tenant,
      scopes: values.scopes
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      clientId: values.id,
    };
    const created = onTable ? await createClient(options) : createLocalClient(dataDir, options);
    print({ ...created, tenantId: values.tenant });
    break;
  }
  case 'list':
    for (const c of onTable ? await listClients() : readClients(dataDir))
      process.stdout.write(
        `${c.clientId}\t${c.tenantId ?? ''}\t${(c.scopes ?? []).join(',')}\t${c.createdAt ?? ''}${'deleted' in c && c.deleted ? '\tdeleted' : ''}\n`,
      );
    break;
  case 'rotate':
    if (!target) throw new Error('rotate needs a client id');
    print({ clientId: target, clientSecret: onTable ? await rotateClient(target) : rotateLocalClientSecret(dataDir, target) });
    break;
  case 'delete':
    if (!target) throw new Error('delete needs a client id');
    if (onTable) await deleteClient(target);
    else deleteLocalClient(dataDir, target);
    break;
  case 'rotated':
  case 'deleted':
    if (!target) throw new Error(`${command} needs a client id`);
    if (!onTable) throw new Error(`${command} records a change made at an external issuer: set CLIENTS_TABLE to the stack's clients table`);
    await recordClientState(command === 'deleted' ? { clientId: target, deleted: true } : await rotationOf(target));
    process.stdout.write(`Recorded in ${process.env.CLIENTS_TABLE}: client ${target} ${command}\n`);
    break;
  default:
    process.stderr.write(
      'usage: [CLIENTS_TABLE=<table>] npm run clients -- create --tenant <id> --scopes <a,b> [--id <clientId>] | list | rotate <clientId> | delete <clientId>\n' +
        '       CLIENTS_TABLE=<table> npm run clients -- rotated <clientId> | deleted <clientId>   (a change made at an external issuer)\n',
    );
    process.exitCode = 2;
}
